import { STOP_WORDS } from './search-text.ts';

/**
 * Places as organization names write them in more than one way: a US state spelt out or as its
 * postal code (`meals on wheels of rhode island`, MEALS ON WHEELS OF RI INC), and a place or its
 * adjective (`hawaii humane society`, HAWAIIAN HUMANE SOCIETY). A search's word is matched by every
 * form of its place (search-query.ts), each counted as the word as typed: they name the same place.
 * Words here are folded as search-text.ts folds them (lower case, no accents or apostrophes).
 */

/** The US states, the District of Columbia and Puerto Rico by postal code, their names as words (stop words left out: `district of columbia`). */
const STATES: Readonly<Record<string, string>> = {
  al: 'alabama',
  ak: 'alaska',
  az: 'arizona',
  ar: 'arkansas',
  ca: 'california',
  co: 'colorado',
  ct: 'connecticut',
  de: 'delaware',
  dc: 'district columbia',
  fl: 'florida',
  ga: 'georgia',
  hi: 'hawaii',
  id: 'idaho',
  il: 'illinois',
  in: 'indiana',
  ia: 'iowa',
  ks: 'kansas',
  ky: 'kentucky',
  la: 'louisiana',
  me: 'maine',
  md: 'maryland',
  ma: 'massachusetts',
  mi: 'michigan',
  mn: 'minnesota',
  ms: 'mississippi',
  mo: 'missouri',
  mt: 'montana',
  ne: 'nebraska',
  nv: 'nevada',
  nh: 'new hampshire',
  nj: 'new jersey',
  nm: 'new mexico',
  ny: 'new york',
  nc: 'north carolina',
  nd: 'north dakota',
  oh: 'ohio',
  ok: 'oklahoma',
  or: 'oregon',
  pa: 'pennsylvania',
  pr: 'puerto rico',
  ri: 'rhode island',
  sc: 'south carolina',
  sd: 'south dakota',
  tn: 'tennessee',
  tx: 'texas',
  ut: 'utah',
  vt: 'vermont',
  va: 'virginia',
  wa: 'washington',
  wv: 'west virginia',
  wi: 'wisconsin',
  wy: 'wyoming',
};

/**
 * Postal codes that are not read as their state, in a search or in a name, because in organization
 * names they are mostly something else:
 * - stop words, which no index keeps: in (Indiana), co (Colorado, read as company);
 * - English words: or, me, hi, oh, ok, id, ma, pa. Of the bundled names holding ME, 27% are in
 *   Maine; HI, 51% in Hawaii (HI-LINE, HI-LAND); OK and ID are the state more often (95%, 85%), but
 *   a search holding `ok` or `id` may mean the word;
 * - words of other languages common in names: de (6% of the names holding it are in Delaware:
 *   CASA DE …), la (40% in Louisiana: LA ROCA FUTBOL CLUB), al (AL-ANON, AL NOOR, the name Al), mi, il;
 * - other abbreviations of names: mt (read as mount: MT ZION; 32% in Montana), ne (northeast: NE OHIO),
 *   va (Veterans Affairs), md (Doctor of Medicine), ms (Ms., multiple sclerosis: NATIONAL MS SOCIETY),
 *   sc (soccer club).
 * Every other code is read as its state: of those of the states the bundled data covers, 79% to 99%
 * of the names holding one are in that state (CT 79%, AR 92%, RI 97%, NM 99%); the others (AZ, CA,
 * FL, GA, IA, MN, MO, NC, NJ, NY, TN, TX, WA, WI) are no word and no other common abbreviation (NC is
 * also INC cut in two in a few IRS names, I NC: a search of north carolina may find those). Words
 * Porter would stem to one of them are kept apart (are is not AR, gas not GA, was not WA, ute not
 * UT: search-text.ts).
 */
const NOT_READ_AS_STATES: ReadonlySet<string> = new Set('in co or me hi oh ok id ma pa de la al mi il mt ne va md ms sc'.split(' '));

/**
 * Places and their adjectives, each group one place: the states whose adjective organization names
 * use, and the nations and regions named in US organizations' names (by their people, the language
 * aside). Left out, as the adjective is mostly another word in US names: india (Indian: American
 * Indian), france, spain, england (French, Spanish, English: languages, surnames), poland (polish),
 * turkey (the bird), georgia (Georgian: the nation, the architecture), dominica (Dominican: the
 * order, the republic), jordan (a given name).
 */
const PLACE_GROUPS: readonly (readonly string[])[] = [
  'alabama alabamian',
  'alaska alaskan',
  'arizona arizonan',
  'arkansas arkansan',
  'california californian',
  'carolina carolinian',
  'colorado coloradan',
  'dakota dakotan',
  'delaware delawarean',
  'florida floridian',
  'hawaii hawaiian',
  'idaho idahoan',
  'illinois illinoisan',
  'iowa iowan',
  'kansas kansan',
  'kentucky kentuckian',
  'louisiana louisianian',
  'maine mainer',
  'maryland marylander',
  'michigan michigander',
  'minnesota minnesotan',
  'mississippi mississippian',
  'missouri missourian',
  'montana montanan',
  'nebraska nebraskan',
  'nevada nevadan',
  'ohio ohioan',
  'oklahoma oklahoman',
  'oregon oregonian',
  'pennsylvania pennsylvanian',
  'rico rican',
  'tennessee tennessean',
  'texas texan',
  'utah utahn',
  'vermont vermonter',
  'virginia virginian',
  'washington washingtonian',
  'wisconsin wisconsinite',
  'wyoming wyomingite',
  'afghanistan afghan',
  'africa african',
  'albania albanian',
  'america american',
  'appalachia appalachian',
  'arabia arabian',
  'argentina argentine argentinian',
  'armenia armenian',
  'asia asian',
  'australia australian',
  'bangladesh bangladeshi',
  'belize belizean',
  'bolivia bolivian',
  'bosnia bosnian',
  'brazil brazilian',
  'burma myanmar burmese',
  'cambodia cambodian',
  'cameroon cameroonian',
  'canada canadian',
  'chile chilean',
  'china chinese',
  'colombia colombian',
  'congo congolese',
  'croatia croatian',
  'cuba cuban',
  'denmark danish',
  'ecuador ecuadorian',
  'egypt egyptian',
  'eritrea eritrean',
  'ethiopia ethiopian',
  'europe european',
  'fiji fijian',
  'finland finnish',
  'germany german',
  'ghana ghanaian',
  'greece greek',
  'guam guamanian',
  'guatemala guatemalan',
  'haiti haitian',
  'honduras honduran',
  'hungary hungarian',
  'indonesia indonesian',
  'iran iranian',
  'iraq iraqi',
  'ireland irish',
  'israel israeli',
  'italy italian',
  'jamaica jamaican',
  'japan japanese',
  'kenya kenyan',
  'korea korean',
  'laos lao laotian',
  'lebanon lebanese',
  'liberia liberian',
  'lithuania lithuanian',
  'macedonia macedonian',
  'mexico mexican',
  'micronesia micronesian',
  'mongolia mongolian',
  'morocco moroccan',
  'nepal nepali nepalese',
  'nicaragua nicaraguan',
  'nigeria nigerian',
  'norway norwegian',
  'pakistan pakistani',
  'panama panamanian',
  'peru peruvian',
  'philippines philippine filipino',
  'polynesia polynesian',
  'portugal portuguese',
  'romania romanian',
  'russia russian',
  'rwanda rwandan',
  'salvador salvadoran',
  'samoa samoan',
  'scotland scottish scots',
  'serbia serbian',
  'slovakia slovak',
  'somalia somali',
  'sudan sudanese',
  'sweden swedish',
  'syria syrian',
  'taiwan taiwanese',
  'tanzania tanzanian',
  'thailand thai',
  'tibet tibetan',
  'tonga tongan',
  'uganda ugandan',
  'ukraine ukrainian',
  'venezuela venezuelan',
  'vietnam vietnamese',
  'wales welsh',
].map((group) => group.split(' '));

/** A state read from its code, and a code from its state's name: the name's words (no stop words). */
const STATE_WORDS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries(STATES)
    .filter(([code]) => !NOT_READ_AS_STATES.has(code))
    .map(([code, name]) => [code, name.split(' ').filter((word) => !STOP_WORDS.has(word))]),
);

const CODE_OF_NAME: ReadonlyMap<string, string> = new Map([...STATE_WORDS].map(([code, words]) => [words.join(' '), code]));
const LONGEST_STATE_NAME = Math.max(...[...STATE_WORDS.values()].map((words) => words.length));

const PLACE_GROUP_OF: ReadonlyMap<string, readonly string[]> = new Map(PLACE_GROUPS.flatMap((group) => group.map((word) => [word, group] as const)));

/** The other words naming the same place as `word` alone (hawaii: hawaiian; texas: texan and tx; tx: texas and texan). */
export function placeForms(word: string): string[] {
  const forms = new Set(PLACE_GROUP_OF.get(word) ?? [word]);
  // A state of one word and its code: each names the other, and the adjectives of the state.
  const stateName = STATE_WORDS.get(word);
  if (stateName?.length === 1) for (const form of PLACE_GROUP_OF.get(stateName[0]!) ?? stateName) forms.add(form);
  for (const form of [...forms]) {
    const code = CODE_OF_NAME.get(form);
    if (code !== undefined) forms.add(code);
  }
  forms.delete(word);
  return [...forms];
}

/** A state of two words or more, named in full at `start` of `words` (rhode island) or by its code (ri). */
export interface StateName {
  code: string;
  /** The words of its name. */
  words: readonly string[];
  /** How many of `words` from `start` name it: the name's words, or 1 for its code. */
  length: number;
}

/** The state of two words or more named at `start` of a search's words, in full or by its code, if any. */
export function stateNameAt(words: readonly string[], start: number): StateName | undefined {
  const byCode = STATE_WORDS.get(words[start]!);
  if (byCode !== undefined) return byCode.length > 1 ? { code: words[start]!, words: byCode, length: 1 } : undefined;
  for (let length = Math.min(LONGEST_STATE_NAME, words.length - start); length >= 2; length--) {
    const named = CODE_OF_NAME.get(words.slice(start, start + length).join(' '));
    if (named !== undefined) return { code: named, words: STATE_WORDS.get(named)!, length };
  }
  return undefined;
}
