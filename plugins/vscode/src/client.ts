/**
 * The specedit protocol client and hunk arithmetic, free of any `vscode` import so that
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
 *  - `applyHunks(text, hunks, ids?)` mirrors the server's `app.diff.apply_hunks`: lines split
 *    on "\n" only, each hunk's oldText is checked, overlapping or stale hunks throw.
 *  - `defaultSocketPath()` and `readDiscovery()` find the server as the Neovim plugin does.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import {
  createMessageConnection,
  MessageConnection,
  ResponseError,
  SocketMessageReader,
  SocketMessageWriter,
} from 'vscode-jsonrpc/node';

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

export interface RewriteOptions {
  k?: number | null;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  draft?: 'lookup' | 'none';
  exact?: boolean;
  maxTokens?: number;
  expand?: 'node' | 'none';
  language?: string;
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
  tokPerSec: number;
  acceptance: number;
  tokensPerStep: number;
  elapsedMs: number;
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

export interface Done {
  sessionId: string;
  status: 'ok' | 'cancelled' | 'error';
  message: string;
  output: string | null;
  hunks: Hunk[];
  validation: Validation | null;
  stats: Record<string, unknown>;
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

export interface Discovery {
  socket: string;
  pid: number;
  protocolVersion: number;
  model: string;
  tcp?: { host: string; port: number; token: string };
}

export interface RewriteHandlers {
  onProgress?: (p: Progress) => void;
  onPreview?: (p: Preview) => void;
}

export interface RewriteHandle {
  /** Resolves with the session id once rewrite/start has answered. */
  started: Promise<StartResult>;
  /** Resolves with the rewrite/done params (status ok, cancelled or error). */
  done: Promise<Done>;
  cancel(): Promise<void>;
}

/** $XDG_RUNTIME_DIR/specedit/rpc.sock, else <tmp>/specedit-<uid>/rpc.sock (as the server). */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && path.isAbsolute(xdg)) {
    return path.join(xdg, 'specedit', 'rpc.sock');
  }
  const tmp = env.TMPDIR || env.TEMP || env.TMP || '/tmp';
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return path.join(tmp, `specedit-${uid}`, 'rpc.sock');
}

export function discoveryPath(socketPath: string): string {
  return socketPath.replace(/\.sock$/, '') + '.json';
}

export function readDiscovery(socketPath: string): Discovery | null {
  try {
    return JSON.parse(fs.readFileSync(discoveryPath(socketPath), 'utf8')) as Discovery;
  } catch {
    return null;
  }
}

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

/** One line for a progress display. */
export function formatProgress(p: Progress): string {
  if (p.state === 'queued') {
    return `queued (#${p.queuePosition})`;
  }
  return (
    `${p.generatedTokens} tok · ${p.tokPerSec.toFixed(1)} tok/s · ` +
    `acceptance ${Math.round(p.acceptance * 100)}% · ${p.tokensPerStep.toFixed(2)} tok/step`
  );
}

interface SessionRoute extends RewriteHandlers {
  resolve: (d: Done) => void;
}

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

  /** Connect to the Unix socket at `socketPath` (rejects if nothing listens there). */
  static connect(socketPath: string, timeoutMs = 10000): Promise<SpeceditClient> {
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
    let resolveDone!: (d: Done) => void;
    let rejectDone!: (e: unknown) => void;
    const done = new Promise<Done>((res, rej) => {
      resolveDone = res;
      rejectDone = rej;
    });
    let sessionId: string | null = null;
    let cancelRequested = false;
    const started = this.connection.sendRequest<StartResult>('rewrite/start', params).then(
      (res) => {
        sessionId = res.sessionId;
        this.sessions.set(res.sessionId, { ...handlers, resolve: resolveDone });
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

  apply(sessionId: string, filePath: string, hunkIds?: number[]): Promise<ApplyResult> {
    const params: Record<string, unknown> = { sessionId, path: filePath };
    if (hunkIds !== undefined) {
      params.hunkIds = hunkIds;
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
    } else if (method === 'rewrite/done') {
      this.sessions.delete(p.sessionId);
      s.resolve(p as Done);
    }
  }

  private onClosed(): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    for (const [id, s] of this.sessions) {
      s.resolve({
        sessionId: id,
        status: 'error',
        message: 'the connection to the server was lost',
        output: null,
        hunks: [],
        validation: null,
        stats: {},
      });
    }
    this.sessions.clear();
    for (const [id, resolve] of this.warms) {
      resolve({ warmId: id, path: null, status: 'error', message: 'the connection to the server was lost' });
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
