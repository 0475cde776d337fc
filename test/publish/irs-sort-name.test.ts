import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { organizationId } from '../../src/hsds/ids.ts';
import type { OrganizationRecord } from '../../src/hsds/records.ts';
import { DEFAULT_DATA_DIR } from '../../src/config.ts';
import { NOT_A_NAME, PERSON_OR_CARE_OF, SAME_AS_NAME, sortNameOmission } from '../../src/sources/irs-sort-name.ts';
import { API, getJson, startTestApp, temporaryDirectory } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';
import { WYOMING } from '../helpers/default-dataset-sample.ts';
import { inputFromSources } from '../helpers/sources.ts';

/**
 * IRS SORT_NAME is served as alternate_name only when it names the organization (docs/data-format.md,
 * IRS section), checked on real rows of the bundled IRS files.
 */

const irsText = (state: string) => gunzipSync(readFileSync(join(DEFAULT_DATA_DIR, `irs-eo-bmf/eo_${state}.csv.gz`))).toString('utf8');

async function readAll(organizations: AsyncIterable<OrganizationRecord> | Iterable<OrganizationRecord>): Promise<OrganizationRecord[]> {
  const all: OrganizationRecord[] = [];
  for await (const organization of organizations) all.push(organization);
  return all;
}

describe('IRS SORT_NAME on the whole Wyoming file', () => {
  const rows = parse(gunzipSync(readFileSync(WYOMING)), { columns: true }) as Record<string, string>[];
  let served: Map<string, string | undefined>;
  let notes: Map<string, { count: number; messages: string[] }>;
  before(async () => {
    const { input, diagnostics } = await inputFromSources([WYOMING]);
    served = new Map((await readAll(input.organizations)).map((organization) => [organization.externalId, organization.alternateName]));
    assert.deepEqual(diagnostics.errors, []);
    notes = new Map(diagnostics.notes.map((note) => [note.kind, { count: note.count, messages: note.examples.map((example) => example.message) }]));
  });

  it('serves SORT_NAME as given or not at all, and counts each value left out as a note', () => {
    assert.equal(served.size, rows.length);
    const withSortName = rows.filter((row) => row.SORT_NAME!.trim() !== '');
    const kept = withSortName.filter((row) => served.get(row.EIN!) !== undefined);
    for (const row of kept) assert.equal(served.get(row.EIN!), row.SORT_NAME!.trim());
    for (const row of rows.filter((row) => row.SORT_NAME!.trim() === '')) assert.equal(served.get(row.EIN!), undefined);
    // Measured on this file: 1,487 rows have a SORT_NAME; 74 name a person or a care-of line (65 by a
    // marker, 9 by the shape of a person's name), 2 are filing notes, 6 repeat NAME.
    assert.equal(withSortName.length, 1_487);
    assert.deepEqual(
      Object.fromEntries([...notes].map(([kind, note]) => [kind, note.count])),
      { [PERSON_OR_CARE_OF]: 74, [NOT_A_NAME]: 2, [SAME_AS_NAME]: 6 },
    );
    assert.equal(kept.length, withSortName.length - 74 - 2 - 6);
  });

  it('serves no value with a trustee, member or care-of marker', () => {
    // `CO 3 COL HENRY B CARRINGTON` (a Sons of Union Veterans unit) is no care-of line: CO then a number.
    const markers = /(^|\s)(TTEES?|CO-TTEE|TRUSTEE|SOLE MBR|MBR|PRES|SECRETARY|PER REP)$|^(C\/O|C-O|%|ATTN) |^CO (?!\d)/;
    const leaked = [...served.values()].filter((name) => name !== undefined && markers.test(name));
    assert.deepEqual(leaked, []);
    assert.equal(served.get('990827439'), 'CO 3 COL HENRY B CARRINGTON');
    const leftOut = rows.filter((row) => markers.test(row.SORT_NAME!.trim()) && served.get(row.EIN!) === undefined);
    assert.equal(leftOut.length, 65);
  });

  it('leaves out trustees, members, officers, filing notes and copies of NAME, by EIN', () => {
    const cases: [ein: string, sortName: string][] = [
      ['206436522', 'MEAD BRADFORD S TTEE'],
      ['133614341', 'UNFRIED AMY B & STEPHEN M TTEES'],
      ['316652919', 'LUSKEY RANDOLPH K CO-TTEE'],
      ['841392178', 'TRACY J COPENHAVER TRUSTEE'],
      ['886574046', 'FOUR SEAS LLC TTEE'],
      ['462927870', 'JENNIFER APRIL WISTISEN SOLE MBR'],
      ['872114597', 'KATHLEEN BLUNN MBR'],
      ['200763698', 'DAY CANDRA PRES'],
      ['010691782', 'SAWYER CYNTHIA SECRETARY'],
      ['266132258', 'SURYAKANT M PATEL PER REP'],
      ['830254675', 'GROUP RETURN'],
      ['742347412', 'WYOMING RESCUE MISSION'],
    ];
    for (const [ein, sortName] of cases) {
      assert.equal(rows.find((row) => row.EIN === ein)?.SORT_NAME, sortName, ein);
      assert.equal(served.get(ein), undefined, `${ein} ${sortName}`);
    }
  });

  it('names the marker in a person or care-of note, never the value', () => {
    const examples = notes.get(PERSON_OR_CARE_OF)!.messages;
    assert.ok(examples.some((message) => /^names a trustee \(TTEES?\); left out$/.test(message)), examples.join('\n'));
    const leftOut = rows.filter((row) => row.SORT_NAME!.trim() !== '' && served.get(row.EIN!) === undefined);
    for (const message of examples) for (const row of leftOut) assert.ok(!message.includes(row.SORT_NAME!.trim()), message);
  });
});

/**
 * Real rows picked by EIN from six bundled state files (copied line for line into a temporary state
 * file): values that name people or care-of lines, and borderline values that name the organization.
 */
const LEFT_OUT: [state: string, ein: string, sortName: string][] = [
  ['wv', '550627380', 'C/O JOHN L LEWIS'],
  ['mt', '810486963', 'CO GARY MATTHEWS'],
  ['mt', '363755614', 'C-O GALE JELLUM'],
  ['mt', '810475023', 'CO NEAL CHASE REGISTERED AGENT'],
  ['wv', '556075855', 'PARKERSBURG NATIONAL BANK TR'],
  ['nv', '367086543', 'CANTWELL DAVID Y SUCCESSOR TTEE'],
  ['nv', '207438469', 'THOMAS DOLIN ESQ TTEE'],
  ['mt', '260672842', 'JANET ROSE SINGLE MBR'],
  ['ky', '611208924', 'JENNIFER ADLER - PRES'],
  ['mt', '810472034', 'JOHNSON ARTHUR B TREASURER'],
  ['nv', '880298779', 'SOLOMON MARK EX DIRECTOR'],
  ['nv', '822068502', 'POTENTIAL FAB EIN'],
];
const KEPT: [state: string, ein: string, sortName: string][] = [
  ['mt', '261391012', 'FRIENDS OF IRISH STUDIES'],
  ['ky', '815065586', 'FRIENDS OF LEXINGTON FISHER HOUSE'],
  ['mt', '061380016', 'SOUTHERN TIER CHAPTER'],
  ['nv', '880103056', 'ODD FELLOWS BLDG TRUSTEES'],
  ['nm', '320260036', 'VEBA TR'],
  ['mt', '810232188', '315 MONTANA COUNCIL TR'],
  ['mt', '237539626', 'MONTANA CFO'],
  ['ky', '610566868', '79 POST LOUIS S OFFICER'],
  ['ut', '934407242', 'CO 15 BRIG GEN THOMAS L KANE'],
  ['nv', '510152825', 'KERAK SHRINERS GROUP RETURN'],
];

describe('IRS SORT_NAME on real rows picked by EIN, through the API', () => {
  const directory = temporaryDirectory();
  let test: TestApp;
  let personNotes: number | undefined;
  before(async () => {
    const picked = [...LEFT_OUT, ...KEPT];
    const lines: string[] = [];
    let header: string | undefined;
    for (const state of new Set(picked.map(([state]) => state))) {
      const [first, ...rest] = irsText(state).split('\n');
      header ??= first;
      assert.equal(first, header);
      for (const [, ein] of picked.filter(([pickedState]) => pickedState === state)) {
        const found = rest.filter((line) => line.startsWith(`${ein},`));
        assert.equal(found.length, 1, `EIN ${ein} in eo_${state}`);
        lines.push(found[0]!);
      }
    }
    writeFileSync(join(directory.path, 'eo_picked.csv'), `${header}\n${lines.join('\n')}\n`);
    const { input, diagnostics } = await inputFromSources([directory.path]);
    test = await startTestApp(input);
    assert.deepEqual(diagnostics.errors, []);
    personNotes = diagnostics.notes.find((note) => note.kind === PERSON_OR_CARE_OF)?.count;
    const notAName = diagnostics.notes.find((note) => note.kind === NOT_A_NAME)?.count;
    assert.equal(notAName, 1);
  });
  after(async () => {
    await test?.close();
    directory.remove();
  });

  it('leaves out every value that names a person or a care-of line, and counts them', async () => {
    for (const [, ein, sortName] of LEFT_OUT) {
      const { status, body, text } = await getJson(test.app, `${API}/organizations/${organizationId(ein)}`);
      assert.equal(status, 200, ein);
      assert.equal(body.alternate_name, undefined, `${ein} ${sortName}`);
      assert.ok(!text.includes(sortName), `${ein} ${sortName}`);
    }
    assert.equal(personNotes, LEFT_OUT.length - 1);
  });

  it('keeps alternate names that name the organization, even near a marker', async () => {
    for (const [, ein, sortName] of KEPT) {
      const { body } = await getJson(test.app, `${API}/organizations/${organizationId(ein)}`);
      assert.equal(body.alternate_name, sortName, ein);
    }
  });
});

describe('IRS SORT_NAME words that are organization names, not markers', () => {
  // Written for this test: organization names seen in other BMF extracts that share a marker word.
  for (const value of ['CO OP NURSERY SCHOOL', 'CO ED SOFTBALL LEAGUE', 'ATT AND T PIONEERS', 'FUNERAL DIRECTOR', 'BOARD OF DIRECTORS']) {
    it(`keeps "${value}"`, () => assert.equal(sortNameOmission(value, 'ANOTHER NAME'), undefined));
  }
  for (const value of ['CO RYAN MARTIN', 'ATT CARLA S MOORE', 'KATHLEEN BAUER - EXEC DIR']) {
    it(`leaves out "${value}"`, () => assert.equal(sortNameOmission(value, 'ANOTHER NAME')?.kind, PERSON_OR_CARE_OF));
  }
});

describe('IRS SORT_NAME values that name a person by their shape (issue 37)', () => {
  // The examples, from the bundled files: a person's name alone, or before a role word whole,
  // cut short or misspelt, and care-of lines.
  const people: [value: string, reason: string][] = [
    ['BISZANTZ GARY E C0-TTEE', 'names a trustee (C0-TTEE)'],
    ['MAYER JAMES I TRES', 'names an officer, member or agent (TRES after a name)'],
    ['ORME MIRTHA T PRE', 'names an officer, member or agent (PRE after a name)'],
    ['ATTENTION MICHAEL S FEELEY', 'an in-care-of line (ATTENTION)'],
    ['GALUCKI LEE J', "is a person's name (surname, given name and initial)"],
    ['HOAGLAND MORTON M TR OFFICER', 'names an officer, member or agent (OFFICER after a name)'],
    ['THE PLANTORY ATTN PLOWSHARES', 'an in-care-of line (ATTN)'],
    ['MARVIN L ROBISON', "is a person's name (given name, initial and surname)"],
    ['GINGER ATKINS', "is a person's name (given name and surname)"],
    ['MANAFORT FRANK G JR', "is a person's name (surname, given name and initial)"],
    ['WILLIAM COLWELL SEC', 'names an officer, member or agent (SEC after a name)'],
    ['LARRY STETLER - ADMIN', 'names an officer, member or agent (ADMIN after a name)'],
  ];
  for (const [value, reason] of people) {
    it(`leaves out "${value}", saying why without the value`, () => {
      const omission = sortNameOmission(value, 'COMMUNITY CHURCH INC');
      assert.deepEqual(omission, { kind: PERSON_OR_CARE_OF, reason });
      const marker = /\(([^ )]+)/.exec(reason)![1];
      for (const word of value.split(' ').filter((word) => word.length > 3 && word !== marker)) assert.ok(!omission!.reason.includes(word), word);
    });
  }

  // Organization names near a person's shape: units named after people, places, chapters, and role
  // words with no person before them.
  const organizations: [value: string, name: string][] = [
    ['79 POST LOUIS S OFFICER', 'AMERICAN LEGION'],
    ['41 ARKANSAS WILDLIFE OFFICER', 'FRATERNAL ORDER OF POLICE'],
    ['JAMES K POLK', 'NATIONAL SOCIETY OF THE DAUGHTERS OF THE AMERICAN REVOLUTION'],
    ['JAMES HUEY', 'NATIONAL SOCIETY OF THE SONS OF THE AMERICAN REVOLUTION'],
    ['SIDNEY LANIER', 'PTA OKLAHOMA CONGRESS'],
    ['10 JOE QUESENBERRY', 'AMERICAN LEGION AUXILIARY'],
    ['DISTRICT C KENTUCKY', 'NATIONAL RURAL LETTER CARRIERS ASSOCIATION'],
    ['POST B FREMONT', 'TRAVELERS PROTECTIVE ASSN OF AMERICA'],
    ['UTAH DEFENSE A', 'HILL-DDO-95 INC'],
    ['WASHINGTON D C', 'CITIZENS COMMISSION ON HUMAN RIGHTS'],
    ['GARLAND COUNTY', 'HABITAT FOR HUMANITY INTERNATIONAL INC'],
    ['WAYNE ACADEMY', 'WAYNE COUNTY SCHOOL FOUNDATION'],
    ['LAWRENCE KANSAS', 'ALTRUSA INTERNATIONAL FOUNDATION INC'],
    ['STERLING NE', 'RURITAN NATIONAL CORP'],
    ['HOLLY BRANCH', 'NATIONAL LEAGUE OF AMERICAN PEN WOMEN INC'],
    ['LOCAL 123', 'UNITED STEELWORKERS'],
    ['BETA CHAPTER', 'PHI THETA KAPPA FRATERNITY'],
    ['ST LOUIS', 'ROTARY INTERNATIONAL'],
    ['PORT ALLEN', 'ROTARY INTERNATIONAL'],
    ['JACKSON SEC', 'ILLUMINATING ENGINEERING SOCIETY'],
    ['OKLAHOMA CITY SEC', 'ILLUMINATING ENGINEERS SOCIETY'],
    ['SINGING HILLS CFO', 'ASSOCIATION OF CAMPS FARTHEST OUT INC'],
    ['CINDERELLA PRE SCHOOL', 'CINDERELLA NURSERY DAY CARE CENTER'],
    ['CEST TRES BON', 'CEST TRES BON INC'],
    ['ATTENTION HOMES', 'ATTENTION HOMES INC'],
  ];
  for (const [value, name] of organizations) {
    it(`keeps "${value}" of ${name}`, () => assert.equal(sortNameOmission(value, name), undefined));
  }
});
