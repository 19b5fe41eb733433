/**
 * Display strings for the progress notice and the status bar, as pure functions of the
 * server's notifications, the CodeLenses of a review (`reviewLenses`), and the text of an
 * answer with its citations checked (`formatAnswer`). No `vscode` import. Fields a newer
 * server adds are optional.
 */
import type { AnswerDone, AnswerProgress, Citation, Done, Progress, Suspect } from './client';
import type { Review } from './review';

/** 1234 -> "1,234". */
export function thousands(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** One line for a progress display: the queue, the reading phase, then the decode figures,
 * followed by what runs the model once the server names it (" · llama.cpp on CPU, verifier numpy"). */
export function formatProgress(p: Progress): string {
  if (p.state === 'queued') {
    return `queued (#${p.queuePosition})`;
  }
  let s: string;
  if (p.phase === 'reading') {
    s = `reading file ${thousands(p.readTokens ?? 0)}`;
    if (p.promptTokens != null) {
      s += `/${thousands(p.promptTokens)}`;
    }
    s += ' tokens';
    if (p.readTokPerSec != null) {
      s += `, ${Math.round(p.readTokPerSec)} tok/s`;
    }
  } else {
    s =
      `${thousands(p.generatedTokens ?? 0)} tok · ${(p.tokPerSec ?? 0).toFixed(1)} tok/s · ` +
      `acceptance ${Math.round((p.acceptance ?? 0) * 100)}% · ${(p.tokensPerStep ?? 0).toFixed(2)} tok/step`;
  }
  const engine = formatEngine(p as unknown as Record<string, unknown>);
  return engine ? `${s} · ${engine}` : s;
}

/** "torch on cuda, verifier triton, edit whole" from rewrite/done stats or a progress
 * notification ('' if the server does not name them). */
export function formatEngine(stats: Record<string, unknown> | null | undefined): string {
  const s = stats ?? {};
  const str = (v: unknown) => (v === null || v === undefined || v === '' ? null : String(v));
  const parts: string[] = [];
  const backend = str(s.backend);
  const device = str(s.device);
  if (backend) {
    parts.push(device ? `${backend} on ${device}` : backend);
  } else if (device) {
    parts.push(`on ${device}`);
  }
  const verifier = str(s.verifier);
  if (verifier) {
    parts.push(`verifier ${verifier}`);
  }
  const edit = str(s.editMode ?? s.edit_mode);
  if (edit) {
    parts.push(`edit ${edit}`);
  }
  return parts.join(', ');
}


/** The notice for a finished rewrite with hunks to review, and whether it is a warning. */
export function formatDone(done: Done): { text: string; warning: boolean } {
  const parts = [`${done.hunks.length} hunk(s)`];
  const tps = done.stats?.decode_tps;
  if (typeof tps === 'number') {
    parts.push(`${tps.toFixed(1)} tok/s`);
  }
  const engine = formatEngine(done.stats);
  if (engine) {
    parts.push(engine);
  }
  const givenUp = done.stats?.given_up;
  if (typeof givenUp === 'string' && givenUp) {
    parts.push(givenUp); // the model's blocks could not be read or placed
  }
  let text = parts.join(', ');
  let warning = false;
  const v = done.validation;
  if (v && !v.ok) {
    text += ` (syntax errors ${v.errorsBefore} → ${v.errorsAfter})`;
    warning = true;
  }
  if (done.status === 'truncated') {
    text = `TRUNCATED: ${done.message || 'the output did not reach its end'}; ${text} of the completed part, review them one by one`;
    warning = true;
  }
  const suspect = formatSuspect(done.suspect);
  if (suspect) {
    text += `. WARNING: ${suspect}`;
    warning = true;
  }
  return { text, warning };
}

/** One line for a suspect result, or null. */
export function formatSuspect(s: Suspect | null | undefined): string | null {
  if (!s) {
    return null;
  }
  if (s.message) {
    return s.message;
  }
  return `the result deletes ${s.deletedLines ?? 'some'} line(s) the instruction did not ask to remove (${s.reason})`;
}

/** What the status-bar item shows. */
export interface StatusState {
  server: 'disconnected' | 'starting' | 'connected' | 'error';
  /** the server's model and backend (initialize), or the error */
  model?: string;
  backend?: string;
  error?: string;
  /** the running rewrite's last progress, if one runs */
  progress?: Progress | null;
  /** the review of the active document, if any */
  review?: { pending: number; truncated: boolean; suspect: boolean } | null;
}

/** The status-bar text (with a codicon) and its tooltip. */
export function formatStatus(s: StatusState): { text: string; tooltip: string } {
  const where = s.model ? `${s.model}${s.backend ? ` (${s.backend})` : ''}` : '';
  let text: string;
  if (s.server === 'starting') {
    text = '$(loading~spin) specedit: starting the server';
  } else if (s.server === 'error') {
    text = '$(error) specedit';
  } else if (s.server === 'disconnected') {
    text = '$(circle-slash) specedit';
  } else {
    text = `$(check) specedit: ${where}`;
  }
  if (s.progress) {
    text = `$(sync~spin) specedit: ${formatProgress(s.progress)}`;
  } else if (s.review) {
    const warn = s.review.truncated ? ' · TRUNCATED' : s.review.suspect ? ' · WARNING' : '';
    text = `$(diff) specedit: ${s.review.pending} hunk(s) to review${warn}`;
  }
  const state = {
    disconnected: 'not connected',
    starting: 'starting the server (loading the model)',
    connected: `connected: ${where}`,
    error: `error: ${s.error ?? '?'}`,
  }[s.server];
  return { text, tooltip: `specedit server: ${state}\nClick for the server's output` };
}

/** One CodeLens of a review: its line, title and command; `args` says what the command gets
 * (`uri`: the document, `hunk`: the document and the hunk's id, `none`: nothing). */
export interface Lens {
  line: number;
  title: string;
  command: string;
  args: 'none' | 'uri' | 'hunk';
  hunkId?: number;
}

/** The CodeLenses a review offers in a document of `lineCount` lines: the warnings and the
 * whole-review commands above the first pending hunk (no accept-all for a truncated result),
 * then Accept / Reject on each pending hunk. */
export function reviewLenses(r: Review, lineCount: number): Lens[] {
  const lenses: Lens[] = [];
  const first = r.pending()[0];
  const top = first ? Math.min(r.position(first).startLine, lineCount - 1) : 0;
  const lens = (title: string, command: string, args: Lens['args']) => lenses.push({ line: top, title, command, args });
  if (r.truncated) {
    lens('$(warning) TRUNCATED: review the hunks one by one', 'specedit.showOutput', 'none');
  }
  if (r.suspect) {
    lens(`$(warning) WARNING: ${formatSuspect(r.suspect)}`, 'specedit.showDiff', 'uri');
  }
  if (!r.truncated) {
    lens('specedit: Accept all', 'specedit.acceptAll', 'uri');
  }
  lens('Reject all', 'specedit.rejectAll', 'uri');
  lens('Show diff', 'specedit.showDiff', 'uri');
  for (const h of r.pending()) {
    const line = Math.min(r.position(h).startLine, lineCount - 1);
    lenses.push({ line, title: '✓ Accept', command: 'specedit.accept', args: 'hunk', hunkId: h.id });
    lenses.push({ line, title: '✗ Reject', command: 'specedit.reject', args: 'hunk', hunkId: h.id });
  }
  return lenses;
}

/** "notes.md:L3" or "notes.md:L3-L5" (the lines cited, else where the quote is), or the file
 * alone; a passage no citation names is marked "(uncited)". */
function citationLabel(c: Citation): string {
  let name = c.file ?? c.source ?? '?';
  const ln = c.lines ?? c.located;
  if (ln) {
    name += ln[0] === ln[1] ? `:L${ln[0]}` : `:L${ln[0]}-L${ln[1]}`;
  }
  return c.file ? name : `${name} (uncited)`;
}

/** One line per citation, as `specedit generate` prints them: "✓ notes.md:L3", or
 * "✗ notes.md:L3: not in notes.md" with the server's reason. */
export function formatCitation(c: Citation): string {
  return c.found ? `✓ ${citationLabel(c)}` : `✗ ${citationLabel(c)}: ${c.problem}`;
}

/** The text shown for a question: "Q: …", a blank line, then the answer so far (from
 * answer/progress) or its end (answer/done: the answer, a blank line, each citation checked;
 * or the status and message of one that did not finish). */
export function formatAnswer(question: string, p: AnswerProgress | AnswerDone | null): string {
  const head = `Q: ${question}\n\n`;
  if (p === null) {
    return head + '(asking…)\n';
  }
  if ('citations' in p) {
    if (p.status !== 'done') {
      return head + `(${p.status}${p.message ? `: ${p.message}` : ''})\n`;
    }
    const cites = p.citations.length
      ? p.citations.map(formatCitation)
      : ['✗ no quotes: nothing in this answer is checked against the files'];
    return head + (p.output ?? '').replace(/\n+$/, '') + '\n\n' + cites.join('\n') + '\n';
  }
  if (p.state === 'queued') {
    return head + `(queued, #${p.queuePosition})\n`;
  }
  return head + (p.text ?? '');
}
