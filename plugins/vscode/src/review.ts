/**
 * Hunk arithmetic and the state of one review, free of any `vscode` import (node tests it).
 *
 * Contract:
 *  - `applyHunks(text, hunks, ids?)` mirrors the server's `app.code.diff.apply_hunks`: lines split
 *    on "\n" only, each hunk's oldText is checked, overlapping or stale hunks throw.
 *  - `Review` holds the text a rewrite was given, its hunks and a verdict per hunk. Accepting
 *    a hunk applies it to the document at once: `accept(id)` returns the edit to make, in the
 *    document's current lines (hunks accepted earlier shift the later ones), and `current` is
 *    the text the document must hold now (the original with the accepted hunks). Rejecting
 *    changes nothing in the document. `acceptAll()` returns every pending hunk's edit against
 *    one document version (for one WorkspaceEdit).
 *  - A truncated result (`truncated`) allows no accept-all (`acceptAllBlocked()` says why); a
 *    suspect one (`suspect`) needs a confirmation first (`needsConfirmation()`).
 *  - `decorations()` (a review's pending hunks, in current lines) and `previewDecorations()`
 *    (a streamed preview's hunks, drawn only where their old lines are still in the text)
 *    say what to draw: the removed lines and the added text of each hunk.
 */
import type { Hunk, Suspect } from './client';

/** Lines split on "\n" only, each keeping its "\n"; the last may lack one. */
export function splitLines(text: string): string[] {
  const parts = text.split('\n');
  const lines = parts.slice(0, -1).map((p) => p + '\n');
  const last = parts[parts.length - 1];
  if (last) {
    lines.push(last);
  }
  return lines;
}

/** Apply the hunks with the given ids (all when omitted) to `text`; throws if stale. */
export function applyHunks(text: string, hunks: Hunk[], ids?: Iterable<number>): string {
  const wanted = ids === undefined ? null : new Set(ids);
  const chosen = hunks
    .filter((h) => wanted === null || wanted.has(h.id))
    .sort((a, b) => a.startLine - b.startLine || a.endLine - b.endLine);
  for (let i = 1; i < chosen.length; i++) {
    const prev = chosen[i - 1];
    const cur = chosen[i];
    const sameInsert =
      prev.startLine === prev.endLine && cur.startLine === cur.endLine && prev.startLine === cur.startLine;
    if (prev.endLine > cur.startLine || sameInsert) {
      throw new Error(`hunks ${prev.id} and ${cur.id} overlap`);
    }
  }
  const lines = splitLines(text);
  for (const h of [...chosen].reverse()) {
    if (!(0 <= h.startLine && h.startLine <= h.endLine && h.endLine <= lines.length)) {
      throw new Error(`hunk ${h.id} is out of range for a ${lines.length}-line text`);
    }
    if (lines.slice(h.startLine, h.endLine).join('') !== h.oldText) {
      throw new Error(`hunk ${h.id} does not match the text (stale hunk?)`);
    }
    lines.splice(h.startLine, h.endLine - h.startLine, ...splitLines(h.newText));
  }
  return lines.join('');
}

/** Normalise CRLF / CR line endings to "\n" (the server's and the hunks' convention). */
export function normalizeEol(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

export type Verdict = 'pending' | 'accepted' | 'rejected';

/** Replace the lines [startLine, endLine) of the document with newText. */
export interface Edit {
  hunkId: number;
  startLine: number;
  endLine: number;
  newText: string;
}

/** What to draw for one hunk: its removed lines (may be empty) and its added lines, shown
 * after `anchorLine` (before it when `anchorBefore`, for an insertion at the very top). */
export interface Decoration {
  hunkId: number;
  removed: { startLine: number; endLine: number } | null;
  added: string[];
  anchorLine: number;
  anchorBefore: boolean;
}

/** The inline text of a decoration's added lines ('' when it adds none): the first line and
 * how many more there are (the whole text is in the hover). */
export function addedText(d: Decoration): string {
  if (d.added.length === 0) {
    return '';
  }
  const more = d.added.length > 1 ? `  (+${d.added.length - 1} more line(s))` : '';
  return `  + ${d.added[0].trim()}${more}`;
}

function lineCount(text: string): number {
  return splitLines(text).length;
}

function decorationAt(h: Hunk, startLine: number, endLine: number): Decoration {
  const added = splitLines(h.newText).map((l) => l.replace(/\n$/, ''));
  const removed = endLine > startLine ? { startLine, endLine } : null;
  const anchorBefore = removed === null && startLine === 0;
  const anchorLine = removed ? endLine - 1 : Math.max(startLine - 1, 0);
  return { hunkId: h.id, removed, added, anchorLine, anchorBefore };
}

/** Decorations for a streamed preview's hunks (original line numbers) over `text`: only the
 * hunks whose old lines are still there. */
export function previewDecorations(text: string, hunks: Hunk[]): Decoration[] {
  const lines = splitLines(text);
  return hunks
    .filter((h) => h.endLine <= lines.length && lines.slice(h.startLine, h.endLine).join('') === h.oldText)
    .map((h) => decorationAt(h, h.startLine, h.endLine));
}

export interface ReviewOptions {
  truncated?: boolean;
  suspect?: Suspect | null;
}

export class Review {
  readonly state = new Map<number, Verdict>();
  /** The text the document holds now: the original with the accepted hunks applied. */
  current: string;
  readonly truncated: boolean;
  readonly suspect: Suspect | null;

  /** Throws if the hunks do not apply to `original` (a stale or malformed result). */
  constructor(
    readonly original: string,
    readonly hunks: Hunk[],
    opts: ReviewOptions = {},
  ) {
    applyHunks(original, hunks);
    this.current = original;
    this.truncated = opts.truncated ?? false;
    this.suspect = opts.suspect ?? null;
    for (const h of hunks) {
      this.state.set(h.id, 'pending');
    }
  }

  pending(): Hunk[] {
    return this.hunks.filter((h) => this.state.get(h.id) === 'pending');
  }

  get finished(): boolean {
    return this.pending().length === 0;
  }

  counts(): { accepted: number; rejected: number; pending: number } {
    const c = { accepted: 0, rejected: 0, pending: 0 };
    for (const v of this.state.values()) {
      c[v] += 1;
    }
    return c;
  }

  /** The lines of hunk `h`'s old text in the current document. */
  position(h: Hunk): { startLine: number; endLine: number } {
    let shift = 0;
    for (const o of this.hunks) {
      // o is above h: it ends where h starts or before (an insertion at h's line included)
      if (o.id !== h.id && this.state.get(o.id) === 'accepted' && o.endLine <= h.startLine) {
        shift += lineCount(o.newText) - (o.endLine - o.startLine);
      }
    }
    return { startLine: h.startLine + shift, endLine: h.endLine + shift };
  }

  private hunk(id: number): Hunk | undefined {
    return this.hunks.find((h) => h.id === id);
  }

  /** Accept hunk `id`: the edit to make now, or null if it is not pending. */
  accept(id: number): Edit | null {
    const h = this.hunk(id);
    if (!h || this.state.get(id) !== 'pending') {
      return null;
    }
    const at = this.position(h);
    this.state.set(id, 'accepted');
    this.current = this.acceptedText();
    return { hunkId: id, ...at, newText: h.newText };
  }

  reject(id: number): boolean {
    if (this.state.get(id) !== 'pending') {
      return false;
    }
    this.state.set(id, 'rejected');
    return true;
  }

  /** Why accept-all is not offered, or null. */
  acceptAllBlocked(): string | null {
    if (this.truncated) {
      return 'the output was truncated: accept its hunks one by one';
    }
    return null;
  }

  needsConfirmation(): boolean {
    return this.suspect !== null;
  }

  /** Accept every pending hunk: their edits, all against the current document (one version),
   * bottom-up. Throws if accept-all is blocked. */
  acceptAll(): Edit[] {
    const blocked = this.acceptAllBlocked();
    if (blocked) {
      throw new Error(blocked);
    }
    const edits = this.pending().map((h) => ({ hunkId: h.id, ...this.position(h), newText: h.newText }));
    for (const e of edits) {
      this.state.set(e.hunkId, 'accepted');
    }
    this.current = this.acceptedText();
    return edits.reverse();
  }

  rejectAll(): void {
    for (const h of this.pending()) {
      this.state.set(h.id, 'rejected');
    }
  }

  /** The pending hunk at `line` of the current document (an insertion counts at its line). */
  hunkAt(line: number): Hunk | undefined {
    return this.pending().find((h) => {
      const p = this.position(h);
      return line >= p.startLine && line <= Math.max(p.startLine, p.endLine - 1);
    });
  }

  /** The next (dir 1) or previous (dir -1) pending hunk from `line`, wrapping around. */
  next(line: number, dir: 1 | -1): Hunk | undefined {
    const hs = this.pending().sort((a, b) => a.startLine - b.startLine);
    if (hs.length === 0) {
      return undefined;
    }
    const start = (h: Hunk) => this.position(h).startLine;
    if (dir > 0) {
      return hs.find((h) => start(h) > line) ?? hs[0];
    }
    return [...hs].reverse().find((h) => start(h) < line) ?? hs[hs.length - 1];
  }

  /** The current document with every pending hunk applied (for the diff view). */
  proposed(): string {
    const ids = this.hunks.filter((h) => this.state.get(h.id) !== 'rejected').map((h) => h.id);
    return applyHunks(this.original, this.hunks, ids);
  }

  /** What to draw for the pending hunks, in current lines. */
  decorations(): Decoration[] {
    return this.pending().map((h) => {
      const p = this.position(h);
      return decorationAt(h, p.startLine, p.endLine);
    });
  }

  private acceptedText(): string {
    const ids = this.hunks.filter((h) => this.state.get(h.id) === 'accepted').map((h) => h.id);
    return applyHunks(this.original, this.hunks, ids);
  }
}
