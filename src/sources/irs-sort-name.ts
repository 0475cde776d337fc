/**
 * Which IRS `SORT_NAME` values are served as `alternate_name`. SORT_NAME is the BMF's secondary name
 * line: mostly a chapter, local or DBA name, but also, in about one row in a hundred of those that
 * have one, the trustee, officer or sole member the IRS files the organization under, or an in-care-of
 * line. Those name a person (or a bank, firm or office acting for the organization), not the
 * organization, so they are left out, as are IRS filing notes and a copy of NAME. The rule, and what
 * it was measured on, is in docs/data-format.md (IRS section).
 */

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

/** A trustee marker anywhere: TTEE, TTEES, TTE, CO-TTEE(S). */
const TRUSTEE_ABBREVIATION = /(?:^|[ ,])(TTEES?|TTE|CO-TTEES?)(?=$|[ ,])/;
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
  const careOf = CARE_OF.exec(value);
  if (careOf !== null) return { kind: PERSON_OR_CARE_OF, reason: `an in-care-of line (${careOf[0]})` };
  const trustee = TRUSTEE_ABBREVIATION.exec(value) ?? TRUSTEE_WORD.exec(value) ?? (TR_LAST.test(value) && TR_TRUSTEE.test(value) ? ['', 'TR'] : null);
  if (trustee !== null) return { kind: PERSON_OR_CARE_OF, reason: `names a trustee (${trustee[1]})` };
  const role = ROLE_LAST.exec(value);
  if (role !== null) return { kind: PERSON_OR_CARE_OF, reason: `names an officer, member or agent (${role[1]})` };
  if (FILING_NOTES.has(value)) return { kind: NOT_A_NAME, reason: `"${value}" is a filing note or placeholder, not a name` };
  if (value === normalize(name)) return { kind: SAME_AS_NAME, reason: 'is NAME again (ignoring case and spacing)' };
  return undefined;
}
