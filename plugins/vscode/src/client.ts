/**
 * The specedit protocol client, free of any `vscode` import so that
 * node's test runner can drive it against a real `specedit serve`.
 *
 * Contract:
 *  - `SpeceditClient.connect(socketPath)` opens a vscode-jsonrpc connection (LSP framing)
 *    over `net.createConnection(socketPath)`; `initialize`, `rewrite`, `cancel`, `apply`
 *    and `shutdown` map 1:1 to the methods in docs/protocol.md.
 *  - `warm({text, path})` asks the server to prefill the prompt prefix every rewrite of that
 *    buffer shares (while the user types the instruction); it resolves with the
 *    `rewrite/warmed` params (status done | cached | interrupted | superseded | error).
 *  - `rewrite()` returns a `RewriteHandle` whose `done` promise settles with the
 *    `rewrite/done` params; progress and previews of that session go to its handlers.
 *    Notifications that arrive before `rewrite/start` has answered are replayed.
 *  - `ask()` (answer/start: a question over context files, its quotes checked) returns an
 *    `AnswerHandle` the same way: `done` settles with the `answer/done` params, and each
 *    `answer/progress` (the whole text so far) goes to its handler.
 *  - `connect` refuses a socket whose directory breaks the server's rule (./paths
 *    `socketProblem`) with an `UnsafeSocketError` before it opens a connection, so a socket
 *    planted by another user never receives a byte.
 *  - The socket paths are in ./paths, the hunk arithmetic and review state in ./review, the
 *    display strings in ./format, starting the server in ./server.
 *  - Fields a newer server adds are optional here (progress `phase`, reading figures and
 *    `backend`/`device`/`verifier`; done status `truncated`, `suspect`; stats
 *    `backend`/`device`/`verifier`/`editMode`): an older server's messages read as before.
 */
import * as net from 'node:net';
import {
  createMessageConnection,
  MessageConnection,
  ResponseError,
  SocketMessageReader,
  SocketMessageWriter,
} from 'vscode-jsonrpc/node';
import { socketProblem, UnsafeSocketError } from './paths';

export const PROTOCOL_VERSION = 1;
export const CONTENT_MODIFIED = -32801;

export interface Hunk {
  id: number;
  startLine: number;
  endLine: number;
  oldText: string;
  newText: string;
}

export interface LineRange {
  startLine: number;
  endLine: number;
}

/** How the model writes the edit (rewrite/start options.edit, newer servers): `auto` lets the
 * server pick, `blocks` writes only the changed lines as search/replace blocks, `whole`
 * rewrites the whole text. */
export type EditMode = 'auto' | 'blocks' | 'whole';

export interface RewriteOptions {
  k?: number | null;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  draft?: 'lookup' | 'none' | 'model' | 'auto';
  exact?: boolean;
  maxTokens?: number;
  expand?: 'node' | 'none';
  language?: string;
  edit?: EditMode;
}

export interface StartParams {
  text: string;
  instruction: string;
  path?: string;
  baseSha256?: string;
  range?: LineRange;
  options?: RewriteOptions;
}

export interface StartResult {
  sessionId: string;
  queuePosition: number;
  range: LineRange | null;
}

export interface Progress {
  sessionId: string;
  state: 'queued' | 'running' | 'done';
  queuePosition: number;
  generatedTokens: number;
  /** Decode rate (newer servers: decode time only, from the first generated token). */
  tokPerSec: number;
  acceptance: number;
  tokensPerStep: number;
  elapsedMs: number;
  /** Newer servers: reading the prompt (prefill), then generating. */
  phase?: 'reading' | 'generating';
  promptTokens?: number;
  readTokens?: number;
  readTokPerSec?: number;
  /** Newer servers: what runs the target and what judges the drafts. */
  backend?: string;
  device?: string;
  verifier?: string;
}

export interface Preview {
  sessionId: string;
  seq: number;
  hunks: Hunk[];
}

export interface Validation {
  language: string;
  errorsBefore: number;
  errorsAfter: number;
  ok: boolean;
}

/** An `ok` result that deletes what the instruction did not ask to remove (newer servers). */
export interface Suspect {
  reason: 'drops_tail' | 'drops_share' | string;
  message: string;
  deletedLines: number;
}

export interface Done {
  sessionId: string;
  /** `truncated` (newer servers): the output stopped before its end; `hunks` cover only the
   * part that was written and `output` is null. */
  status: 'ok' | 'cancelled' | 'error' | 'truncated';
  message: string;
  output: string | null;
  hunks: Hunk[];
  validation: Validation | null;
  stats: Record<string, unknown>;
  suspect?: Suspect | null;
}

export interface WarmParams {
  text: string;
  path?: string;
  range?: LineRange;
  options?: Pick<RewriteOptions, 'expand' | 'language'>;
}

export interface Warmed {
  warmId: number;
  path: string | null;
  status: 'done' | 'cached' | 'interrupted' | 'superseded' | 'error';
  message?: string;
  prefixTokens?: number;
  cachedTokens?: number;
  evaluatedTokens?: number;
  ms?: number;
}

export interface InitializeResult {
  server: string;
  version: string;
  protocolVersion: number;
  model: string;
  backend: string;
}

export interface ApplyResult {
  path: string;
  backup: string | null;
  sha256: string;
  appliedHunks: number[];
}

/** A context file of answer/start: without `text`, `path` is absolute and the server reads it. */
export interface ContextFile {
  path: string;
  text?: string;
}

export interface AnswerParams {
  question: string;
  contextFiles: ContextFile[];
  style?: 'quote' | 'free';
  maxTokens?: number;
  verbatim?: boolean;
}

export interface AnswerProgress {
  sessionId: string;
  state: 'queued' | 'running';
  queuePosition: number;
  elapsedMs: number;
  /** While running: the whole answer so far, and a count of these. */
  text?: string;
  seq?: number;
}

/** One quoted passage of an answer, checked against the context files (app/answer/quotes.py). */
export interface Citation {
  file: string | null;
  lines: [number, number] | null;
  quote: string;
  found: boolean;
  located: [number, number] | null;
  source: string | null;
  problem: string;
}

export interface AnswerDone {
  sessionId: string;
  status: 'done' | 'cancelled' | 'error';
  message: string;
  output: string | null;
  citations: Citation[];
  quotesFound: boolean;
  stats: Record<string, unknown>;
}

export interface AnswerHandle {
  started: Promise<{ sessionId: string; queuePosition: number }>;
  done: Promise<AnswerDone>;
  cancel(): Promise<void>;
}

export interface RewriteHandlers {
  onProgress?: (p: Progress) => void;
  onPreview?: (p: Preview) => void;
}

export interface RewriteHandle {
  /** Resolves with the session id once rewrite/start has answered. */
  started: Promise<StartResult>;
  /** Resolves with the rewrite/done params (status ok, truncated, cancelled or error). */
  done: Promise<Done>;
  cancel(): Promise<void>;
}

interface SessionRoute extends RewriteHandlers {
  onAnswer?: (p: AnswerProgress) => void;
  resolve: (d: never) => void;
  /** What `done` settles with when the connection is lost. */
  lost: (sessionId: string) => Done | AnswerDone;
}

const LOST = 'the connection to the server was lost';

export class SpeceditClient {
  private sessions = new Map<string, SessionRoute>();
  private early = new Map<string, Array<[string, unknown]>>();
  private warms = new Map<number, (w: Warmed) => void>();
  private earlyWarms = new Map<number, Warmed>();
  private closed = false;
  private closeListeners: Array<() => void> = [];

  private constructor(
    readonly connection: MessageConnection,
    readonly socket: net.Socket,
  ) {
    connection.onNotification('rewrite/progress', (p: Progress) => this.route('rewrite/progress', p));
    connection.onNotification('rewrite/preview', (p: Preview) => this.route('rewrite/preview', p));
    connection.onNotification('rewrite/done', (p: Done) => this.route('rewrite/done', p));
    connection.onNotification('answer/progress', (p: AnswerProgress) => this.route('answer/progress', p));
    connection.onNotification('answer/done', (p: AnswerDone) => this.route('answer/done', p));
    connection.onNotification('rewrite/warmed', (w: Warmed) => {
      const resolve = this.warms.get(w.warmId);
      if (resolve) {
        this.warms.delete(w.warmId);
        resolve(w);
      } else {
        this.earlyWarms.set(w.warmId, w);
      }
    });
    connection.onClose(() => this.onClosed());
    connection.listen();
  }

  /** Connect to the Unix socket at `socketPath` (rejects if nothing listens there, and with
   * an UnsafeSocketError, before any connection, if its directory breaks the rule). */
  static connect(socketPath: string, timeoutMs = 10000): Promise<SpeceditClient> {
    const problem = socketProblem(socketPath);
    if (problem) {
      return Promise.reject(new UnsafeSocketError(problem));
    }
    return new Promise((resolve, reject) => {
      const socket = net.createConnection(socketPath);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer from ${socketPath} within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        const conn = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
        resolve(new SpeceditClient(conn, socket));
      });
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  initialize(client = 'vscode', version = '0'): Promise<InitializeResult> {
    return this.connection.sendRequest('initialize', { client, version });
  }

  /** Start a rewrite; see RewriteHandle. */
  rewrite(params: StartParams, handlers: RewriteHandlers = {}): RewriteHandle {
    const lost = (sessionId: string): Done => ({
      sessionId,
      status: 'error',
      message: LOST,
      output: null,
      hunks: [],
      validation: null,
      stats: {},
    });
    return this.start<StartResult, Done>('rewrite/start', params, { ...handlers, lost });
  }

  /** Ask a question about context files (answer/start); see AnswerHandle. */
  ask(params: AnswerParams, onProgress?: (p: AnswerProgress) => void): AnswerHandle {
    const lost = (sessionId: string): AnswerDone => ({
      sessionId,
      status: 'error',
      message: LOST,
      output: null,
      citations: [],
      quotesFound: false,
      stats: {},
    });
    return this.start<{ sessionId: string; queuePosition: number }, AnswerDone>('answer/start', params, {
      onAnswer: onProgress,
      lost,
    });
  }

  private start<R extends { sessionId: string }, D>(
    method: string,
    params: object,
    route: Omit<SessionRoute, 'resolve'>,
  ): { started: Promise<R>; done: Promise<D>; cancel: () => Promise<void> } {
    let resolveDone!: (d: D) => void;
    let rejectDone!: (e: unknown) => void;
    const done = new Promise<D>((res, rej) => {
      resolveDone = res;
      rejectDone = rej;
    });
    let sessionId: string | null = null;
    let cancelRequested = false;
    const started = this.connection.sendRequest<R>(method, params).then(
      (res) => {
        sessionId = res.sessionId;
        this.sessions.set(res.sessionId, { ...route, resolve: resolveDone as (d: never) => void });
        for (const [method, p] of this.early.get(res.sessionId) ?? []) {
          this.route(method, p as { sessionId: string });
        }
        this.early.delete(res.sessionId);
        if (cancelRequested) {
          void this.cancel(res.sessionId);
        }
        return res;
      },
      (err: unknown) => {
        rejectDone(err);
        throw err;
      },
    );
    started.catch(() => undefined);
    const cancel = async (): Promise<void> => {
      if (sessionId === null) {
        cancelRequested = true;
        return;
      }
      await this.cancel(sessionId);
    };
    return { started, done, cancel };
  }

  /** Prefill the prompt prefix of `params.text` on the server; see docs/protocol.md. */
  async warm(params: WarmParams): Promise<Warmed> {
    const { warmId } = await this.connection.sendRequest<{ warmId: number }>('rewrite/warm', params);
    const early = this.earlyWarms.get(warmId);
    if (early) {
      this.earlyWarms.delete(warmId);
      return early;
    }
    return new Promise<Warmed>((resolve) => this.warms.set(warmId, resolve));
  }

  async cancel(sessionId: string): Promise<boolean> {
    const res = await this.connection.sendRequest<{ cancelled: boolean }>('rewrite/cancel', { sessionId });
    return res.cancelled;
  }

  /** rewrite/apply; `force` (newer servers) applies a suspect result. */
  apply(sessionId: string, filePath: string, hunkIds?: number[], force = false): Promise<ApplyResult> {
    const params: Record<string, unknown> = { sessionId, path: filePath };
    if (hunkIds !== undefined) {
      params.hunkIds = hunkIds;
    }
    if (force) {
      params.force = true;
    }
    return this.connection.sendRequest('rewrite/apply', params);
  }

  /** Stop the server itself (shutdown, then exit). */
  async shutdownServer(): Promise<void> {
    await this.connection.sendRequest('shutdown');
    await this.connection.sendNotification('exit');
  }

  dispose(): void {
    this.connection.dispose();
    this.socket.destroy();
    this.onClosed();
  }

  private route(method: string, p: { sessionId: string }): void {
    const s = this.sessions.get(p.sessionId);
    if (!s) {
      const list = this.early.get(p.sessionId) ?? [];
      list.push([method, p]);
      this.early.set(p.sessionId, list.slice(-50));
      return;
    }
    if (method === 'rewrite/progress') {
      s.onProgress?.(p as Progress);
    } else if (method === 'rewrite/preview') {
      s.onPreview?.(p as Preview);
    } else if (method === 'answer/progress') {
      s.onAnswer?.(p as AnswerProgress);
    } else if (method === 'rewrite/done' || method === 'answer/done') {
      this.sessions.delete(p.sessionId);
      s.resolve(p as never);
    }
  }

  private onClosed(): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    for (const [id, s] of this.sessions) {
      s.resolve(s.lost(id) as never);
    }
    this.sessions.clear();
    for (const [id, resolve] of this.warms) {
      resolve({ warmId: id, path: null, status: 'error', message: LOST });
    }
    this.warms.clear();
    for (const l of this.closeListeners) {
      l();
    }
  }
}

export function isContentModified(err: unknown): boolean {
  return err instanceof ResponseError && err.code === CONTENT_MODIFIED;
}

export function errorCode(err: unknown): number | undefined {
  return err instanceof ResponseError ? err.code : undefined;
}
