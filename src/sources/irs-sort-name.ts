/**
 * Which IRS `SORT_NAME` values are served as `alternate_name`. SORT_NAME is the BMF's secondary name
 * line: mostly a chapter, local or DBA name, but also, in about one row in a hundred of those that
 * have one, the trustee, officer or sole member the IRS files the organization under, or an in-care-of
 * line. Those name a person (or a bank, firm or office acting for the organization), not the
 * organization, so they are left out, as are IRS filing notes and a copy of NAME. People are found by
 * marker words (TTEE, C/O, PRES...) and by the shape of a person's name (`GALUCKI LEE J`, `MARVIN L
 * ROBISON`), alone or before a role word (`MAYER JAMES I TRES`). The rule, and what it was measured on,
 * is in docs/data-format.md (IRS section) and bench/alternate-names/README.md.
 */

import { GIVEN_NAMES } from './irs-given-names.ts';

export interface SortNameOmission {
  /** One of the three note kinds below. */
  kind: string;
  /** Says why, with the marker found; never the whole value, which may be a person's name. */
  reason: string;
}

export const PERSON_OR_CARE_OF = 'IRS SORT_NAME names a person or care-of line, not served as alternate_name';
export const NOT_A_NAME = 'IRS SORT_NAME is a filing note or placeholder, not a name, not served as alternate_name';
export const SAME_AS_NAME = 'IRS SORT_NAME repeats NAME, not served as alternate_name';

/**
 * Starts a care-of line: `C/O`, `C-O`, `%`, `ATTN`/`ATT`, `CARE OF`, or `CO` then a word. Not `CO 15 …`
 * (a unit number), `CO OP`/`CO ED` (co-operative, co-educational) or `ATT AND T` (a company name).
 */
const CARE_OF = /^(?:C\/O|C-O|%|ATTN(?= )|ATT(?= (?!AND T\b|& T\b))|(?:IN )?CARE OF(?= )|CO(?= (?!OP\b|ED\b|OPERATIVE\b)[^\d ]))/;

/** ATTN within the value (`THE PLANTORY ATTN PLOWSHARES`): the rest is whom the mail is for. */
const ATTENTION_WITHIN = / (ATTN)(?= )/;

/** A trustee marker anywhere: TTEE, TTEES, TTE, CO-TTEE(S), also typed with a zero (`C0-TTEE`). */
const TRUSTEE_ABBREVIATION = /(?:^|[ ,])(TTEES?|TTE|C[O0]-TTEES?)(?=$|[ ,])/;
/** TRUSTEE(S) last, but not a body of trustees (`ODD FELLOWS BLDG TRUSTEES` is the organization). */
const TRUSTEE_WORD = /(?<!\b(?:BLDG|BUILDING|BOARD OF) )\b(TRUSTEES?)$/;
/**
 * `TR` last is as often "trust" (`VEBA TR`, `315 MONTANA COUNCIL TR`) as "trustee"; it is a trustee
 * after a bank or trust company, or after a name with a middle initial (`JAMES J KALLED TR`).
 */
const TR_LAST = /\bTR$/;
const TR_TRUSTEE = /\bBANK\b|\b(?:TRUST|TR) CO\b|^[A-Z]+ [A-Z] [A-Z]+ TR$/;

/**
 * An officer, member or agent marker last (`ALIX READ SOLE MBR`, `JENNIFER ADLER - PRES`,
 * `KATHLEEN BAUER - EXEC DIR`, `TREASURER`). Left out of the list because the data uses them for
 * organizations too: OFFICER (`79 POST LOUIS S OFFICER`), ADMINISTRATOR and ADM (school administrator
 * locals), CFO (Camps Farthest Out), SEC (section), OWNER, JR, SR, MD. PASTOR counts, but not in
 * `EL BUEN PASTOR` (the Good Shepherd), nor DIRECTOR(S) of a `FUNERAL DIRECTOR` or `BOARD OF DIRECTORS`.
 */
const ROLE_LAST =
  /(?<!\b(?:BUEN|FUNERAL|BOARD OF) )\b(SOLE MBR|SINGLE MBR|MBR|SOLE MEMBER|MEMBER|PRES|PRESIDENT|TREAS|TREASURER|SECRETARY|SECY|DIR|DIRECTOR|CEO|CHAIR|CHAIRMAN|MGR|MANAGER|BOOKKEEPER|PASTOR|FOUNDER|ATTORNEY|ESQ|CPA|AGENT|ET ALS?|ETAL|EXECUTOR|EXECUTRIX|ADMR|PER REP)$/;

/**
 * Words after a person's name that give their role, whole, cut short or misspelt as the IRS has them:
 * `MAYER JAMES I TRES`, `ORME MIRTHA T PRE`, `HOAGLAND MORTON M TR OFFICER`, `GREG MANA CFO`. Alone at
 * the end they are no marker (ROLE_LAST says why: `79 POST LOUIS S OFFICER`, `JACKSON SEC`, `MONTANA
 * CFO`); they count only after something shaped like a person's name (see personBeforeRole).
 */
const ROLE_AFTER_NAME = new Set(
  ('TR TRS TRE TREA TRES TREAS TRSR PRE PRES SEC SECY OFFICER ADMIN ADM ADMINISTRATOR CFO COO CEO VP EXEC EXECUTIVE ' +
    'OWNER CHIEF PRINC FINC DIR DIREC CPA ESQ MBR -').split(' '),
);

/** Jr., Sr., II...: they end a person's name and say nothing of its shape. */
const GENERATION = new Set(['JR', 'SR', 'II', 'III', 'IV']);

/**
 * Words of organization and place names that follow a given name in SORT_NAME values that are no
 * person (`WAYNE ACADEMY`, `MATTHEW HOUSE`, `GARLAND COUNTY`, `LAWRENCE KANSAS`), so they are never
 * taken for a surname.
 */
const ORGANIZATION_WORDS = new Set(
  ('ACADEMY ALLIANCE ALUMNI AREA ARTS ASSEMBLY ASSN ASSOC ASSOCIATION AUX AUXILIARY BAND BOARD BOOSTER BOOSTERS ' +
    'BRANCH CAMP CARE CEMETERY CENTER CENTRAL CHAPEL CHAPTER CHOIR CHURCH CITY CLINIC CLUB COALITION COLLEGE ' +
    'COMMITTEE COMMUNITY CORP CORPORATION CORPS COUNCIL COUNTY COURT CREEK CREW DEPARTMENT DEPT DISTRICT DIVISION ' +
    'EDUCATION ELEMENTARY ENDOWMENT FARM FELLOWSHIP FEST FESTIVAL FOUNDATION FRIENDS FUND GALLERY GARDEN GARDENS ' +
    'GENERATION GRANGE GROUP GUILD HEALTH HIGH HOME HOMES HOSPITAL HOUSE INC INSTITUTE INTERNATIONAL LAKE LEADERS ' +
    'LEAGUE LEGAL LIBRARY LIGHT LOCAL LODGE MANOR MEMORIAL MEN MINISTERIES MINISTRIES MINISTRY MISSION MUSEUM ' +
    'NETWORK OFFICE OUTREACH PACK PALS PANTRY PARK PARTNERS PAYABLE PLAYGROUND PLAZA POST PRIDE PROGRAM PROJECT ' +
    'PTA PTO PTSA RANCH REGION RESCUE RIVER ROTARY SCHOLARSHIP SCHOOL SCOUTS SECTION SERVICES SHELTER SHRINERS ' +
    'SOCIETY SPRINGS STATE STATION STUDIO TEAM TEACHERS TEMPLE THEATER THEATRE TROOP TRUST UNISERV UNIT ' +
    'UNIVERSITY USBC VALLEY WARRIORS WOMEN YOUTH NEA HFH DAR SAR EHC ' +
    'ALABAMA ALASKA ARIZONA ARKANSAS CALIFORNIA COLORADO CONNECTICUT DELAWARE FLORIDA GEORGIA HAWAII IDAHO ' +
    'ILLINOIS INDIANA IOWA KANSAS KENTUCKY LOUISIANA MAINE MARYLAND MASSACHUSETTS MICHIGAN MINNESOTA MISSISSIPPI ' +
    'MISSOURI MONTANA NEBRASKA NEVADA OHIO OKLAHOMA OREGON PENNSYLVANIA TENNESSEE TEXAS UTAH VERMONT VIRGINIA ' +
    'WASHINGTON WISCONSIN WYOMING').split(' '),
);

/**
 * Organizations whose units take a person's name: lineage societies (the DAR's `JAMES K POLK`
 * chapter), veterans' posts, lodges, and parent-teacher groups of schools named after someone. A bare
 * person's name is their unit's name, so for them only a name with a role word is left out.
 */
const UNITS_NAMED_AFTER_PEOPLE =
  /\b(?:REVOLUTION|COLONIAL|DAUGHTERS|SONS|CHILDREN OF THE|PIONEERS|CONFEDERA\w*|UNION VETERANS|LEGION|VETERANS|VFW|AMVETS|PURPLE HEART|MARINE CORPS LEAGUE|4-H|PTA|PTSA|PTO|PARENTS?|TEACHERS?|KNIGHTS|MASONS?|MASONIC|EASTERN STAR|DEMOLAY|ODD FELLOWS|REBEKAH|PYTHIAS|ELKS|SHRINERS|EAGLES|MOOSE)\b/;

const INITIAL = /^[A-Z]$/;
/** A word of a name: two-letter words are as often a state (`STERLING NE`, `ALLEN TX`) as a surname. */
const WORD = /^[A-Z][A-Z'-]+[A-Z]$/;
const isGivenName = (word: string | undefined): boolean => word !== undefined && GIVEN_NAMES.has(word);
const isSurname = (word: string | undefined): boolean => word !== undefined && WORD.test(word) && !ORGANIZATION_WORDS.has(word);

/**
 * The shape of a person's name `words` have, if any. The IRS writes people surname first
 * (`GALUCKI LEE J`) as often as not (`MARVIN L ROBISON`); a given name is what tells them from
 * `DISTRICT C KENTUCKY`, `POST B FREMONT` or `UTAH DEFENSE A`.
 */
function personNameShape(words: readonly string[]): string | undefined {
  const name = GENERATION.has(words.at(-1) ?? '') ? words.slice(0, -1) : words;
  const [first, second, third] = name;
  if (name.length === 3 && isSurname(first) && isGivenName(second) && INITIAL.test(third!)) return 'surname, given name and initial';
  if (name.length === 3 && isGivenName(first) && INITIAL.test(second!) && isSurname(third)) return 'given name, initial and surname';
  if (name.length === 2 && isGivenName(first) && isSurname(second)) return 'given name and surname';
  return undefined;
}

/**
 * Whether `words`, followed by a role word, name a person: a person's name shape, or two to four
 * words with a given name or an initial among them and no organization word or number
 * (`ORME MIRTHA T`, `MICHAEL EDWARD BERRY`). Not `79 POST LOUIS S`, `OKLAHOMA CITY`, `SINGING HILLS`.
 */
function personBeforeRole(words: readonly string[]): boolean {
  if (personNameShape(words) !== undefined) return true;
  if (words.length < 2 || words.length > 4) return false;
  if (!words.every((word) => INITIAL.test(word) || isSurname(word) || GENERATION.has(word))) return false;
  return words.some((word) => isGivenName(word)) || (words.some((word) => INITIAL.test(word)) && words.filter((word) => WORD.test(word)).length >= 2);
}

/** The role word ending `words` after a person's name (`TRES` of `MAYER JAMES I TRES`), if any. */
function roleAfterPerson(words: readonly string[]): string | undefined {
  let end = words.length;
  while (end > 0 && ROLE_AFTER_NAME.has(words[end - 1]!)) end--;
  const role = words.slice(end).filter((word) => word !== '-').at(-1);
  return role !== undefined && personBeforeRole(words.slice(0, end)) ? role : undefined;
}

/** Whole values that name nothing: IRS processing notes and placeholders. */
const FILING_NOTES = new Set([
  'GROUP RETURN',
  'PARENT RETURN',
  'POTENTIAL FAB EIN',
  'SAME',
  'SAME AS ABOVE',
  'NONE',
  'NA',
  'N/A',
  'NO',
  'DBA',
  'INC',
  'NON-PROFIT',
  'NONPROFIT',
]);

const normalize = (text: string): string => text.trim().replace(/\s+/g, ' ').toUpperCase();

/** Why `sortName` is not served as the alternate name of the organization called `name`, or undefined to serve it. */
export function sortNameOmission(sortName: string, name: string): SortNameOmission | undefined {
  const value = normalize(sortName);
  const words = value.split(' ');
  const careOf = CARE_OF.exec(value) ?? ATTENTION_WITHIN.exec(value) ?? (words[0] === 'ATTENTION' && personBeforeRole(words.slice(1)) ? ['ATTENTION'] : null);
  if (careOf !== null) return { kind: PERSON_OR_CARE_OF, reason: `an in-care-of line (${careOf.at(-1)})` };
  const trustee = TRUSTEE_ABBREVIATION.exec(value) ?? TRUSTEE_WORD.exec(value) ?? (TR_LAST.test(value) && TR_TRUSTEE.test(value) ? ['', 'TR'] : null);
  if (trustee !== null) return { kind: PERSON_OR_CARE_OF, reason: `names a trustee (${trustee[1]})` };
  const role = ROLE_LAST.exec(value);
  if (role !== null) return { kind: PERSON_OR_CARE_OF, reason: `names an officer, member or agent (${role[1]})` };
  const roleAfterName = roleAfterPerson(words);
  if (roleAfterName !== undefined) return { kind: PERSON_OR_CARE_OF, reason: `names an officer, member or agent (${roleAfterName} after a name)` };
  if (FILING_NOTES.has(value)) return { kind: NOT_A_NAME, reason: `"${value}" is a filing note or placeholder, not a name` };
  if (value === normalize(name)) return { kind: SAME_AS_NAME, reason: 'is NAME again (ignoring case and spacing)' };
  const shape = personNameShape(words);
  if (shape !== undefined && !UNITS_NAMED_AFTER_PEOPLE.test(normalize(name))) return { kind: PERSON_OR_CARE_OF, reason: `is a person's name (${shape})` };
  return undefined;
}
