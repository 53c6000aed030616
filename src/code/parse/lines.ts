/** Line arithmetic over one source text: 1-based line numbers, as chunks and symbols report them. */
export class SourceLines {
  /** Offset (UTF-16 units, as tree-sitter's indices in JavaScript) where each line starts. */
  private readonly starts: number[] = [0];

  constructor(readonly text: string) {
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.starts.push(i + 1);
  }

  get count(): number {
    return this.starts.length;
  }

  /** Offset just past the line's last character, before its line break. */
  private endOf(line: number): number {
    const next = this.starts[line];
    if (next === undefined) return this.text.length;
    return this.text[next - 2] === "\r" ? next - 2 : next - 1;
  }

  /** The text of lines start..end (inclusive), without the final line break. */
  slice(start: number, end: number): string {
    return this.text.slice(this.starts[start - 1] ?? 0, this.endOf(end));
  }

  length(line: number): number {
    return this.endOf(line) - (this.starts[line - 1] ?? 0);
  }

  isBlank(line: number): boolean {
    const start = this.starts[line - 1] ?? 0;
    const end = this.endOf(line);
    for (let i = start; i < end; i++) {
      const c = this.text.charCodeAt(i);
      if (c !== 32 && c !== 9 && c !== 13 && c !== 12 && c !== 11) return false;
    }
    return true;
  }

  /** Characters of lines start..end counted as a chunk's text would hold them. */
  chars(start: number, end: number): number {
    return this.endOf(end) - (this.starts[start - 1] ?? 0);
  }
}
