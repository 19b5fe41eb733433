/**
 * VS Code glue for specedit: commands, progress notification with Cancel, diff preview
 * against a virtual document, Accept/Reject CodeLenses, and one WorkspaceEdit to apply.
 * All protocol work is in ./client (tested on its own against a real server).
 */
import { spawn } from 'node:child_process';
import * as vscode from 'vscode';
import {
  applyHunks,
  defaultSocketPath,
  Done,
  formatProgress,
  Hunk,
  LineRange,
  normalizeEol,
  SpeceditClient,
  StartParams,
} from './client';

const SCHEME = 'specedit-proposed';

interface Review {
  uri: vscode.Uri;
  version: number;
  text: string;
  hunks: Hunk[];
  state: Map<number, 'pending' | 'accepted' | 'rejected'>;
}

let client: SpeceditClient | null = null;
let connecting: Promise<SpeceditClient> | null = null;
const reviews = new Map<string, Review>();
const proposedChanged = new vscode.EventEmitter<vscode.Uri>();
const lensesChanged = new vscode.EventEmitter<void>();

function settings() {
  const c = vscode.workspace.getConfiguration('specedit');
  return {
    socket: c.get<string | null>('socket') || defaultSocketPath(),
    command: c.get<string[]>('command') ?? ['specedit', 'serve'],
    autoStart: c.get<boolean>('autoStart') ?? true,
    maxTokens: c.get<number | null>('maxTokens') ?? null,
    warm: c.get<boolean>('warm') ?? true,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startServer(socket: string, command: string[]): Promise<SpeceditClient> {
  const args = [...command.slice(1)];
  if (vscode.workspace.getConfiguration('specedit').get<string | null>('socket')) {
    args.push('--socket', socket);
  }
  const child = spawn(command[0], args, { detached: true, stdio: 'ignore' });
  child.unref();
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'specedit: starting the server (loading the model)…' },
    async () => {
      const deadline = Date.now() + 300_000;
      let exited = false;
      child.once('exit', () => (exited = true));
      while (Date.now() < deadline && !exited) {
        try {
          return await SpeceditClient.connect(socket, 2000);
        } catch {
          await sleep(300);
        }
      }
      throw new Error(`the server did not come up on ${socket}`);
    },
  );
}

async function getClient(): Promise<SpeceditClient> {
  if (client && !client.isClosed) {
    return client;
  }
  if (connecting) {
    return connecting;
  }
  connecting = (async () => {
    const s = settings();
    let c: SpeceditClient;
    try {
      c = await SpeceditClient.connect(s.socket);
    } catch (err) {
      if (!s.autoStart) {
        throw new Error(`no specedit server on ${s.socket}: run \`specedit serve\``);
      }
      c = await startServer(s.socket, s.command);
    }
    await c.initialize('vscode', vscode.version);
    c.onClose(() => {
      if (client === c) {
        client = null;
      }
    });
    client = c;
    return c;
  })();
  try {
    return await connecting;
  } finally {
    connecting = null;
  }
}

function proposedUri(doc: vscode.Uri): vscode.Uri {
  return vscode.Uri.from({ scheme: SCHEME, path: doc.path, query: encodeURIComponent(doc.toString()) });
}

function proposedText(r: Review): string {
  const ids = r.hunks.filter((h) => r.state.get(h.id) !== 'rejected').map((h) => h.id);
  return applyHunks(r.text, r.hunks, ids);
}

/**
 * Have the server prefill the prompt prefix of `doc` (see rewrite/warm in docs/protocol.md):
 * on 2 CPU cores a 200-line file takes the 1.5B model ~20 s, which then overlaps with typing
 * the instruction. `connect`: also connect (or start the server) when not connected yet.
 */
function warmDocument(doc: vscode.TextDocument, connect: boolean, range?: LineRange): void {
  const text = normalizeEol(doc.getText());
  if (!settings().warm || !text.trim() || (!connect && (!client || client.isClosed))) {
    return;
  }
  const path = doc.uri.scheme === 'file' ? doc.uri.fsPath : undefined;
  void getClient()
    .then((c) => c.warm({ text, path, range }))
    .catch(() => undefined); // a warm-up only saves time; the rewrite reports errors
}

/** The selected lines as a rewrite range (a selection ending at column 0 stops before it). */
function selectedLines(editor: vscode.TextEditor): LineRange {
  const sel = editor.selection;
  const end = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
  return { startLine: sel.start.line, endLine: end };
}

async function rewrite(selectionOnly: boolean): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage('specedit: open a file first');
    return;
  }
  warmDocument(editor.document, true, selectionOnly ? selectedLines(editor) : undefined);
  const instruction = await vscode.window.showInputBox({
    prompt: selectionOnly ? 'specedit: how should the selection change?' : 'specedit: how should the file change?',
    placeHolder: 'e.g. Rename Inventory to Stock and add docstrings',
  });
  if (!instruction) {
    return;
  }
  const doc = editor.document;
  const text = normalizeEol(doc.getText());
  const version = doc.version;
  const params: StartParams = { text, instruction, path: doc.uri.scheme === 'file' ? doc.uri.fsPath : undefined };
  if (selectionOnly) {
    params.range = selectedLines(editor);
  }
  const maxTokens = settings().maxTokens;
  if (maxTokens) {
    params.options = { maxTokens };
  }
  let done: Done;
  try {
    const c = await getClient();
    done = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'specedit', cancellable: true },
      async (progress, token) => {
        const handle = c.rewrite(params, {
          onProgress: (p) => progress.report({ message: formatProgress(p) }),
          onPreview: (p) => progress.report({ message: `${p.hunks.length} hunk(s) so far` }),
        });
        token.onCancellationRequested(() => void handle.cancel());
        return handle.done;
      },
    );
  } catch (err) {
    void vscode.window.showErrorMessage(`specedit: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  if (done.status !== 'ok') {
    const show = done.status === 'cancelled' ? vscode.window.showInformationMessage : vscode.window.showErrorMessage;
    void show(`specedit: ${done.message || done.status}`);
    return;
  }
  if (done.hunks.length === 0) {
    void vscode.window.showInformationMessage('specedit: no changes');
    return;
  }
  const review: Review = {
    uri: doc.uri,
    version,
    text,
    hunks: done.hunks,
    state: new Map(done.hunks.map((h) => [h.id, 'pending'] as const)),
  };
  reviews.set(doc.uri.toString(), review);
  lensesChanged.fire();
  proposedChanged.fire(proposedUri(doc.uri));
  const v = done.validation;
  if (v && !v.ok) {
    void vscode.window.showWarningMessage(`specedit: the rewrite has more syntax errors (${v.errorsBefore} → ${v.errorsAfter})`);
  }
  await vscode.commands.executeCommand(
    'vscode.diff',
    doc.uri,
    proposedUri(doc.uri),
    `specedit: ${instruction.slice(0, 40)} (${done.hunks.length} hunk(s))`,
  );
}

/** Apply all accepted hunks of a finished review as one WorkspaceEdit. */
async function finishReview(r: Review): Promise<void> {
  reviews.delete(r.uri.toString());
  lensesChanged.fire();
  const accepted = r.hunks.filter((h) => r.state.get(h.id) === 'accepted');
  if (accepted.length === 0) {
    return;
  }
  const doc = await vscode.workspace.openTextDocument(r.uri);
  if (doc.version !== r.version && normalizeEol(doc.getText()) !== r.text) {
    void vscode.window.showErrorMessage('specedit: the document changed since the rewrite; not applying');
    return;
  }
  const edit = new vscode.WorkspaceEdit();
  for (const h of accepted) {
    const range = new vscode.Range(h.startLine, 0, h.endLine, 0);
    edit.replace(r.uri, doc.validateRange(range), h.newText);
  }
  const ok = await vscode.workspace.applyEdit(edit);
  void vscode.window.showInformationMessage(
    ok ? `specedit: applied ${accepted.length} hunk(s)` : 'specedit: the edit was refused',
  );
}

function reviewFor(uri?: vscode.Uri): Review | undefined {
  const target = uri ?? vscode.window.activeTextEditor?.document.uri;
  if (!target) {
    return undefined;
  }
  if (target.scheme === SCHEME) {
    return reviews.get(decodeURIComponent(target.query));
  }
  return reviews.get(target.toString());
}

function hunkAtCursor(r: Review): Hunk | undefined {
  const line = vscode.window.activeTextEditor?.selection.active.line ?? -1;
  return r.hunks.find(
    (h) => r.state.get(h.id) === 'pending' && line >= h.startLine && line <= Math.max(h.startLine, h.endLine - 1),
  );
}

async function decide(verdict: 'accepted' | 'rejected', uri?: vscode.Uri, id?: number): Promise<void> {
  const r = reviewFor(uri);
  if (!r) {
    void vscode.window.showInformationMessage('specedit: nothing to review here');
    return;
  }
  const h = id === undefined ? hunkAtCursor(r) : r.hunks.find((x) => x.id === id);
  if (!h) {
    void vscode.window.showInformationMessage('specedit: no hunk under the cursor');
    return;
  }
  r.state.set(h.id, verdict);
  proposedChanged.fire(proposedUri(r.uri));
  lensesChanged.fire();
  if ([...r.state.values()].every((s) => s !== 'pending')) {
    await finishReview(r);
  }
}

async function decideAll(verdict: 'accepted' | 'rejected', uri?: vscode.Uri): Promise<void> {
  const r = reviewFor(uri);
  if (!r) {
    return;
  }
  for (const [id, s] of r.state) {
    if (s === 'pending') {
      r.state.set(id, verdict);
    }
  }
  await finishReview(r);
}

class LensProvider implements vscode.CodeLensProvider {
  onDidChangeCodeLenses = lensesChanged.event;
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const r = reviews.get(doc.uri.toString());
    if (!r) {
      return [];
    }
    const lenses: vscode.CodeLens[] = [];
    const top = new vscode.Range(0, 0, 0, 0);
    lenses.push(new vscode.CodeLens(top, { title: 'specedit: Accept all', command: 'specedit.acceptAll', arguments: [doc.uri] }));
    lenses.push(new vscode.CodeLens(top, { title: 'Reject all', command: 'specedit.rejectAll', arguments: [doc.uri] }));
    lenses.push(new vscode.CodeLens(top, { title: 'Show diff', command: 'specedit.showDiff', arguments: [doc.uri] }));
    for (const h of r.hunks) {
      if (r.state.get(h.id) !== 'pending') {
        continue;
      }
      const at = new vscode.Range(Math.min(h.startLine, doc.lineCount - 1), 0, Math.min(h.startLine, doc.lineCount - 1), 0);
      lenses.push(new vscode.CodeLens(at, { title: '✓ Accept', command: 'specedit.accept', arguments: [doc.uri, h.id] }));
      lenses.push(new vscode.CodeLens(at, { title: '✗ Reject', command: 'specedit.reject', arguments: [doc.uri, h.id] }));
    }
    return lenses;
  }
}

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
      onDidChange: proposedChanged.event,
      provideTextDocumentContent: (uri) => {
        const r = reviews.get(decodeURIComponent(uri.query));
        return r ? proposedText(r) : '';
      },
    }),
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, new LensProvider()),
    vscode.languages.registerCodeLensProvider({ scheme: 'untitled' }, new LensProvider()),
    vscode.commands.registerCommand('specedit.rewriteFile', () => rewrite(false)),
    vscode.commands.registerCommand('specedit.rewriteSelection', () => rewrite(true)),
    vscode.commands.registerCommand('specedit.accept', (uri?: vscode.Uri, id?: number) => decide('accepted', uri, id)),
    vscode.commands.registerCommand('specedit.reject', (uri?: vscode.Uri, id?: number) => decide('rejected', uri, id)),
    vscode.commands.registerCommand('specedit.acceptAll', (uri?: vscode.Uri) => decideAll('accepted', uri)),
    vscode.commands.registerCommand('specedit.rejectAll', (uri?: vscode.Uri) => decideAll('rejected', uri)),
    vscode.commands.registerCommand('specedit.showDiff', (uri?: vscode.Uri) => {
      const r = reviewFor(uri);
      if (r) {
        return vscode.commands.executeCommand('vscode.diff', r.uri, proposedUri(r.uri), 'specedit: proposed');
      }
      return undefined;
    }),
    vscode.window.onDidChangeActiveTextEditor((e) => {
      if (e && (e.document.uri.scheme === 'file' || e.document.uri.scheme === 'untitled')) {
        warmDocument(e.document, false);
      }
    }),
    proposedChanged,
    lensesChanged,
    { dispose: () => client?.dispose() },
  );
}

export function deactivate(): void {
  client?.dispose();
  client = null;
}
