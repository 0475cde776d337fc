import { KeptValues } from './kept-values.ts';

/**
 * The words of a dataset's organization names (as search-text.ts writes them, before stemming), with
 * their tokens and how many organizations hold each: what a search's unknown words are corrected to
 * and its last word completed from. Held in memory per open dataset, as sorted arrays and a trie of
 * typed arrays (a few bytes per letter), built when the dataset is opened.
 */

export interface VocabularyEntry {
  word: string;
  token: string;
  organizations: number;
}

export interface WordMatch {
  word: string;
  token: string;
  organizations: number;
  /** Edits from the word asked for (Damerau: a swap of neighbours is one edit); 0 for a completion. */
  distance: number;
}

const NO_NODE = -1;
/** Words whose neighbours are kept (see Vocabulary.nearKept). */
const NEAR_KEPT = 1024;

export class Vocabulary {
  private readonly words: string[];
  private readonly tokens: string[];
  private readonly counts: Int32Array;
  // The trie: node 0 is the root; children are chained through nextSibling in letter order.
  private readonly letter: Uint16Array;
  private readonly firstChild: Int32Array;
  private readonly nextSibling: Int32Array;
  /** The entry a node ends, or NO_NODE. */
  private readonly entryAt: Int32Array;
  private readonly maxLength: number;
  /**
   * Words near a word, kept: a search that matches nothing asks for the same words' neighbours when
   * it is read each more lenient way and when a spelling is suggested (a long word's, two edits
   * away, take 3 to 4 ms to find). The oldest goes first.
   */
  private readonly nearKept = new KeptValues<WordMatch[]>(NEAR_KEPT);

  /** `entries` sorted by word (code unit order), each word once. */
  constructor(entries: readonly VocabularyEntry[]) {
    this.words = entries.map((entry) => entry.word);
    this.tokens = entries.map((entry) => entry.token);
    this.counts = Int32Array.from(entries, (entry) => entry.organizations);
    let nodes = 1;
    let previous = '';
    let maxLength = 0;
    for (const word of this.words) {
      nodes += word.length - commonPrefix(previous, word);
      previous = word;
      maxLength = Math.max(maxLength, word.length);
    }
    this.maxLength = maxLength;
    this.letter = new Uint16Array(nodes);
    this.firstChild = new Int32Array(nodes).fill(NO_NODE);
    this.nextSibling = new Int32Array(nodes).fill(NO_NODE);
    this.entryAt = new Int32Array(nodes).fill(NO_NODE);
    // Words come sorted, so a word shares the path of the previous one up to their common prefix and
    // every new node is the last child of its parent.
    const path = [0];
    const lastChild = new Int32Array(nodes).fill(NO_NODE);
    let next = 1;
    previous = '';
    this.words.forEach((word, index) => {
      const shared = commonPrefix(previous, word);
      path.length = shared + 1;
      for (let depth = shared; depth < word.length; depth++) {
        const parent = path[depth]!;
        const node = next++;
        this.letter[node] = word.charCodeAt(depth);
        if (lastChild[parent] === NO_NODE) this.firstChild[parent] = node;
        else this.nextSibling[lastChild[parent]!] = node;
        lastChild[parent] = node;
        path.push(node);
      }
      this.entryAt[path[word.length]!] = index;
      previous = word;
    });
  }

  get size(): number {
    return this.words.length;
  }

  private index(word: string): number {
    let low = 0;
    let high = this.words.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.words[middle]! < word) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The entry of exactly this word. */
  get(word: string): WordMatch | undefined {
    const at = this.index(word);
    return this.words[at] === word ? this.match(at, 0) : undefined;
  }

  private match(at: number, distance: number): WordMatch {
    return { word: this.words[at]!, token: this.tokens[at]!, organizations: this.counts[at]!, distance };
  }

  /** Up to `limit` longer words starting with `prefix`, those held by the most organizations first. */
  completions(prefix: string, limit: number): WordMatch[] {
    const found: number[] = [];
    for (let at = this.index(prefix); at < this.words.length && this.words[at]!.startsWith(prefix); at++) {
      if (this.words[at] !== prefix) found.push(at);
    }
    return found
      .sort((a, b) => this.counts[b]! - this.counts[a]! || a - b)
      .slice(0, limit)
      .map((at) => this.match(at, 0));
  }

  /**
   * Words within `maxDistance` edits of `word` (insertions, deletions, substitutions and swaps of
   * neighbours), other than the word itself: the trie is walked with one row of the edit-distance
   * table per letter, and a branch is left as soon as no word below it can be close enough.
   */
  near(word: string, maxDistance: number): WordMatch[] {
    // A copy: callers sort and cut what they are given.
    return [...this.nearKept.get(`${maxDistance}\t${word}`, () => this.walkNear(word, maxDistance))];
  }

  private walkNear(word: string, maxDistance: number): WordMatch[] {
    const width = word.length + 1;
    const rows: Int32Array[] = Array.from({ length: Math.min(this.maxLength, word.length + maxDistance) + 2 }, () => new Int32Array(width));
    for (let column = 0; column < width; column++) rows[0]![column] = column;
    const found: WordMatch[] = [];
    const letters = [0];
    const visit = (node: number, depth: number) => {
      for (let child = this.firstChild[node]!; child !== NO_NODE; child = this.nextSibling[child]!) {
        if (depth + 1 >= rows.length) return;
        const row = rows[depth + 1]!;
        const above = rows[depth]!;
        const letter = this.letter[child]!;
        letters[depth + 1] = letter;
        row[0] = depth + 1;
        let best = row[0];
        for (let column = 1; column < width; column++) {
          const cost = word.charCodeAt(column - 1) === letter ? 0 : 1;
          let value = Math.min(above[column]! + 1, row[column - 1]! + 1, above[column - 1]! + cost);
          if (depth >= 1 && column >= 2 && letter === word.charCodeAt(column - 2) && letters[depth] === word.charCodeAt(column - 1)) {
            value = Math.min(value, rows[depth - 1]![column - 2]! + 1);
          }
          row[column] = value;
          if (value < best) best = value;
        }
        const entry = this.entryAt[child]!;
        if (entry !== NO_NODE && row[width - 1]! <= maxDistance && this.words[entry] !== word) found.push(this.match(entry, row[width - 1]!));
        if (best <= maxDistance) visit(child, depth + 1);
      }
    };
    visit(0, 0);
    return found;
  }
}

function commonPrefix(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  let index = 0;
  while (index < length && a.charCodeAt(index) === b.charCodeAt(index)) index++;
  return index;
}
