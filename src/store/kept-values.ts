/**
 * Values made once per key and kept, at most `limit`: when one more is made, the oldest goes. For
 * what a request would otherwise make again (a search's words, its categories, a word's neighbours).
 */
export class KeptValues<Value> {
  private readonly values = new Map<string, Value>();
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** The value kept for `key`, made by `make` if none is. */
  get(key: string, make: () => Value): Value {
    if (this.values.has(key)) return this.values.get(key)!;
    if (this.values.size >= this.limit) this.values.delete(this.values.keys().next().value!);
    const value = make();
    this.values.set(key, value);
    return value;
  }

  /** Forgets `key`'s value if it is still `value`. */
  forget(key: string, value: Value): void {
    if (this.values.get(key) === value) this.values.delete(key);
  }
}
