/**
 * How much work one call may do on a caller's content: characters scanned, matches kept, bytes
 * inflated. Workers' clocks stand still while code runs (time moves only across I/O), so a parser
 * counts its work rather than timing it, stops when the count is spent, and says what it left out.
 */
export class WorkBudget {
  private used = 0;
  private readonly notes: string[] = [];

  constructor(readonly limit: number) {}

  get spent(): number {
    return this.used;
  }

  get left(): number {
    return Math.max(0, this.limit - this.used);
  }

  /** Spends `units` and returns true if they fit; otherwise spends nothing and returns false. */
  take(units: number): boolean {
    if (this.used + units > this.limit) return false;
    this.used += units;
    return true;
  }

  /** Records what was left out (once per distinct text), for the answer's note. */
  cut(note: string): void {
    if (!this.notes.includes(note)) this.notes.push(note);
  }

  get truncated(): boolean {
    return this.notes.length > 0;
  }

  /** What was cut, joined for a note; null when nothing was. */
  note(): string | null {
    return this.notes.length > 0 ? this.notes.join("; ") : null;
  }
}
