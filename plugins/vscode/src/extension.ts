/**
 * VS Code glue for specedit: commands, keybindings and menus (package.json, with `when`
 * clauses on the context keys `specedit.running`, `specedit.reviewing`, `specedit.truncated`),
 * a progress notification with Cancel, a status-bar item (server, model, rewrite state), an
 * output channel with the server's stderr, inline decorations that stream while the model
 * writes, Accept/Reject CodeLenses whose accepted hunks apply at once, and a diff view on
 * demand; `specedit.ask` (./ask) answers a question about the open files. Everything
 * testable lives in plain modules tested by node: ./client (protocol), ./paths (socket),
 * ./server (starting it), ./review (hunks and review state), ./format.
 */
import * as vscode from 'vscode';
import { ask } from './ask';
import { Done, EditMode, LineRange, Preview, Progress, RewriteOptions, SpeceditClient, StartParams } from './client';
import { formatDone, formatProgress, formatStatus, formatSuspect, reviewLenses, StatusState } from './format';
import { defaultSocketPath, UnsafeSocketError } from './paths';
import { addedText, Decoration, Edit, normalizeEol, previewDecorations, Review } from './review';
import { startServer } from './server';

const SCHEME = 'specedit-proposed';

interface Running {
  cancel: () => Promise<void>;
  version: number;
  progress: Progress | null;
}

let client: SpeceditClient | null = null;
let connecting: Promise<SpeceditClient> | null = null;
const reviews = new Map<string, Review>();
const running = new Map<string, Running>();
const status: StatusState = { server: 'disconnected' };
const proposedChanged = new vscode.EventEmitter<vscode.Uri>();
const lensesChanged = new vscode.EventEmitter<void>();
let output: vscode.OutputChannel;
let statusItem: vscode.StatusBarItem;
let removedType: vscode.TextEditorDecorationType;
let addedType: vscode.TextEditorDecorationType;
const drawn = new Map<string, Decoration[]>();

function settings() {
  const c = vscode.workspace.getConfiguration('specedit');
  const opt = <T>(key: string): T | null => {
    const v = c.get<T | null>(key);
    return v === undefined || v === null || v === '' ? null : v;
  };
  return {
    socket: opt<string>('socket') ?? defaultSocketPath(),
    explicitSocket: opt<string>('socket'),
    command: c.get<string[]>('command') ?? ['specedit', 'serve'],
    autoStart: c.get<boolean>('autoStart') ?? true,
    warm: c.get<boolean>('warm') ?? true,
    openDiff: c.get<boolean>('openDiff') ?? false,
    model: opt<string>('model'),
    gpuLayers: opt<string>('gpuLayers'),
    backend: opt<string>('backend'),
    device: opt<string>('device'),
    quant: opt<string>('quant'),
    options: {
      maxTokens: opt<number>('maxTokens') ?? undefined,
      k: opt<number>('k') ?? undefined,
      temperature: opt<number>('temperature') ?? undefined,
      exact: c.get<boolean>('exact') || undefined,
      edit: opt<EditMode>('edit') ?? undefined,
    } as RewriteOptions,
  };
}

function updateStatus(): void {
  const doc = vscode.window.activeTextEditor?.document;
  const key = doc?.uri.toString() ?? '';
  const r = reviews.get(key);
  status.progress = running.get(key)?.progress ?? null;
  status.review = r ? { pending: r.pending().length, truncated: r.truncated, suspect: r.suspect !== null } : null;
  const { text, tooltip } = formatStatus(status);
  statusItem.text = text;
  statusItem.tooltip = tooltip;
  void vscode.commands.executeCommand('setContext', 'specedit.reviewing', r !== undefined);
  void vscode.commands.executeCommand('setContext', 'specedit.truncated', r?.truncated ?? false);
  void vscode.commands.executeCommand('setContext', 'specedit.running', running.has(key));
}

async function getClient(): Promise<SpeceditClient> {
  if (client && !client.isClosed) {
    return client;
  }
  connecting ??= (async () => {
    const s = settings();
    let c: SpeceditClient;
    try {
      c = await SpeceditClient.connect(s.socket);
    } catch (err) {
      if (err instanceof UnsafeSocketError || !s.autoStart) {
        throw err instanceof UnsafeSocketError ? err : new Error(`no specedit server on ${s.socket}: run \`specedit serve\``);
      }
      status.server = 'starting';
      updateStatus();
      output.appendLine(`starting: ${s.command.join(' ')}`);
      c = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'specedit: starting the server (loading the model)…' },
        () =>
          startServer(
            {
              command: s.command,
              socket: s.explicitSocket,
              model: s.model,
              gpuLayers: s.gpuLayers,
              backend: s.backend,
              device: s.device,
              quant: s.quant,
            },
            s.socket,
            { onStderr: (line) => output.appendLine(line) },
          ),
      );
    }
    const info = await c.initialize('vscode', vscode.version);
    Object.assign(status, { server: 'connected', model: info.model, backend: info.backend, error: undefined });
    output.appendLine(`connected to ${s.socket}: ${info.server} ${info.version}, model ${info.model} (${info.backend})`);
    if (s.model && info.model !== s.model) {
      output.appendLine(`note: the server runs ${info.model}, not specedit.model ${s.model}; stop it to restart with that model`);
    }
    c.onClose(() => {
      if (client === c) {
        client = null;
        status.server = 'disconnected';
        updateStatus();
      }
    });
    client = c;
    return c;
  })();
  try {
    return await connecting;
  } catch (err) {
    Object.assign(status, { server: 'error', error: err instanceof Error ? err.message : String(err) });
    output.appendLine(`error: ${status.error}`);
    throw err;
  } finally {
    connecting = null;
    updateStatus();
  }
}

function proposedUri(doc: vscode.Uri): vscode.Uri {
  return vscode.Uri.from({ scheme: SCHEME, path: doc.path, query: encodeURIComponent(doc.toString()) });
}

function docPath(doc: vscode.TextDocument): string | undefined {
  return doc.uri.scheme === 'file' ? doc.uri.fsPath : undefined;
}

/** Have the server prefill `doc`'s prompt prefix (rewrite/warm) while the user types. */
function warmDocument(doc: vscode.TextDocument, connect: boolean, range?: LineRange): void {
  const text = normalizeEol(doc.getText());
  if (!settings().warm || !text.trim() || (!connect && (!client || client.isClosed))) {
    return;
  }
  void getClient()
    .then((c) => c.warm({ text, path: docPath(doc), range }))
    .catch(() => undefined); // a warm-up only saves time; the rewrite reports errors
}

/** The selected lines as a rewrite range (a selection ending at column 0 stops before it). */
function selectedLines(editor: vscode.TextEditor): LineRange {
  const sel = editor.selection;
  const end = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
  return { startLine: sel.start.line, endLine: end };
}

// ------------------------------------------------------------------ decorations

function draw(uri: vscode.Uri, decos: Decoration[] | null): void {
  const key = uri.toString();
  if (decos) {
    drawn.set(key, decos);
  } else {
    drawn.delete(key);
  }
  for (const editor of vscode.window.visibleTextEditors) {
    if (editor.document.uri.toString() === key) {
      paint(editor, decos ?? []);
    }
  }
}

function paint(editor: vscode.TextEditor, decos: Decoration[]): void {
  const removed: vscode.DecorationOptions[] = [];
  const added: vscode.DecorationOptions[] = [];
  const last = editor.document.lineCount - 1;
  for (const d of decos) {
    if (d.removed) {
      removed.push({ range: new vscode.Range(d.removed.startLine, 0, Math.min(d.removed.endLine - 1, last), 0) });
    }
    if (d.added.length > 0) {
      const line = Math.min(d.anchorLine, last);
      const text = addedText(d);
      const hover = new vscode.MarkdownString().appendCodeblock(d.added.join('\n'), editor.document.languageId);
      const range = editor.document.lineAt(line).range;
      added.push({
        range: d.anchorBefore ? range.with({ end: range.start }) : range.with({ start: range.end }),
        hoverMessage: hover,
        renderOptions: d.anchorBefore ? { before: { contentText: text + '  ' } } : { after: { contentText: text } },
      });
    }
  }
  editor.setDecorations(removedType, removed);
  editor.setDecorations(addedType, added);
}

// ------------------------------------------------------------------ rewriting

async function rewrite(selectionOnly: boolean): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage('specedit: open a file first');
    return;
  }
  const doc = editor.document;
  const key = doc.uri.toString();
  if (running.has(key)) {
    void vscode.window.showWarningMessage('specedit: a rewrite of this file is running (specedit: Cancel Rewrite)');
    return;
  }
  const range = selectionOnly ? selectedLines(editor) : undefined;
  warmDocument(doc, true, range);
  const instruction = await vscode.window.showInputBox({
    prompt: selectionOnly ? 'specedit: how should the selection change?' : 'specedit: how should the file change?',
    placeHolder: 'e.g. Rename Inventory to Stock and add docstrings',
  });
  if (!instruction) {
    return;
  }
  const text = normalizeEol(doc.getText());
  const version = doc.version;
  const s = settings();
  const params: StartParams = { text, instruction, path: docPath(doc), range };
  const options = Object.fromEntries(Object.entries(s.options).filter(([, v]) => v !== undefined));
  if (Object.keys(options).length > 0) {
    params.options = options as RewriteOptions;
  }
  let done: Done;
  try {
    const c = await getClient();
    done = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'specedit', cancellable: true },
      async (progress, token) => {
        const handle = c.rewrite(params, {
          onProgress: (p) => {
            const r = running.get(key);
            if (r) {
              r.progress = p;
            }
            progress.report({ message: formatProgress(p) });
            updateStatus();
          },
          onPreview: (p: Preview) => {
            if (doc.version === version) {
              draw(doc.uri, previewDecorations(text, p.hunks));
            }
          },
        });
        running.set(key, { cancel: handle.cancel, version, progress: null });
        updateStatus();
        token.onCancellationRequested(() => void handle.cancel());
        try {
          return await handle.done;
        } finally {
          running.delete(key);
          draw(doc.uri, null);
          updateStatus();
        }
      },
    );
  } catch (err) {
    void vscode.window.showErrorMessage(`specedit: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  finishRewrite(doc, text, version, instruction, done, s.openDiff);
}

function finishRewrite(doc: vscode.TextDocument, text: string, version: number, instruction: string, done: Done, openDiff: boolean): void {
  const truncated = done.status === 'truncated';
  if (done.status !== 'ok' && !(truncated && done.hunks.length > 0)) {
    const msg = truncated ? `TRUNCATED, nothing usable: ${done.message}` : done.message || done.status;
    const show = done.status === 'cancelled' ? vscode.window.showInformationMessage : vscode.window.showErrorMessage;
    void show(`specedit: ${msg}`);
    return;
  }
  if (done.hunks.length === 0) {
    void vscode.window.showInformationMessage('specedit: no changes');
    return;
  }
  if (doc.version !== version && normalizeEol(doc.getText()) !== text) {
    void vscode.window.showErrorMessage('specedit: the document changed while the rewrite ran; its result was discarded');
    return;
  }
  let review: Review;
  try {
    review = new Review(text, done.hunks, { truncated, suspect: done.suspect ?? null });
  } catch (err) {
    void vscode.window.showErrorMessage(`specedit: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  reviews.set(doc.uri.toString(), review);
  refresh(review, doc.uri);
  const { text: note, warning } = formatDone(done);
  void (warning ? vscode.window.showWarningMessage : vscode.window.showInformationMessage)(`specedit: ${note}`);
  if (openDiff) {
    void vscode.commands.executeCommand('vscode.diff', doc.uri, proposedUri(doc.uri), `specedit: ${instruction.slice(0, 40)}`);
  }
}

// ------------------------------------------------------------------ review

function refresh(r: Review, uri: vscode.Uri): void {
  draw(uri, r.finished ? null : r.decorations());
  proposedChanged.fire(proposedUri(uri));
  lensesChanged.fire();
  if (r.finished) {
    reviews.delete(uri.toString());
    const c = r.counts();
    void vscode.window.showInformationMessage(`specedit: ${c.accepted} hunk(s) accepted, ${c.rejected} rejected`);
  }
  updateStatus();
}

function endReview(uri: vscode.Uri, why: string): void {
  reviews.delete(uri.toString());
  draw(uri, null);
  proposedChanged.fire(proposedUri(uri));
  lensesChanged.fire();
  updateStatus();
  void vscode.window.showWarningMessage(`specedit: ${why}`);
}

function reviewFor(uri?: vscode.Uri): [Review, vscode.Uri] | undefined {
  const target = uri ?? vscode.window.activeTextEditor?.document.uri;
  if (!target) {
    return undefined;
  }
  const key = target.scheme === SCHEME ? decodeURIComponent(target.query) : target.toString();
  const r = reviews.get(key);
  return r ? [r, vscode.Uri.parse(key)] : undefined;
}

/** Apply `edits` (against the document as `r.current` was before them) as one WorkspaceEdit. */
async function applyEdits(uri: vscode.Uri, before: string, edits: Edit[]): Promise<boolean> {
  const doc = await vscode.workspace.openTextDocument(uri);
  if (normalizeEol(doc.getText()) !== before) {
    return false;
  }
  const edit = new vscode.WorkspaceEdit();
  for (const e of edits) {
    edit.replace(uri, doc.validateRange(new vscode.Range(e.startLine, 0, e.endLine, 0)), e.newText);
  }
  return vscode.workspace.applyEdit(edit);
}

async function decide(verdict: 'accept' | 'reject', uri?: vscode.Uri, id?: number): Promise<void> {
  const found = reviewFor(uri);
  if (!found) {
    void vscode.window.showInformationMessage('specedit: nothing to review here');
    return;
  }
  const [r, docUri] = found;
  const line = vscode.window.activeTextEditor?.selection.active.line ?? -1;
  const h = id === undefined ? r.hunkAt(line) : r.hunks.find((x) => x.id === id);
  if (!h) {
    void vscode.window.showInformationMessage('specedit: no hunk under the cursor');
    return;
  }
  if (verdict === 'reject') {
    r.reject(h.id);
  } else {
    const before = r.current;
    const e = r.accept(h.id);
    if (e && !(await applyEdits(docUri, before, [e]))) {
      endReview(docUri, 'the document changed during the review, or the edit was refused; the review ended');
      return;
    }
  }
  refresh(r, docUri);
}

async function decideAll(verdict: 'accept' | 'reject', uri?: vscode.Uri): Promise<void> {
  const found = reviewFor(uri);
  if (!found) {
    return;
  }
  const [r, docUri] = found;
  if (verdict === 'reject') {
    r.rejectAll();
    refresh(r, docUri);
    return;
  }
  const blocked = r.acceptAllBlocked();
  if (blocked) {
    void vscode.window.showWarningMessage(`specedit: ${blocked}`);
    return;
  }
  if (r.needsConfirmation()) {
    const yes = 'Accept All Anyway';
    const pick = await vscode.window.showWarningMessage(`specedit WARNING: ${formatSuspect(r.suspect)}`, { modal: true }, yes);
    if (pick !== yes) {
      return;
    }
  }
  const before = r.current;
  if (!(await applyEdits(docUri, before, r.acceptAll()))) {
    endReview(docUri, 'the document changed during the review, or the edit was refused; the review ended');
    return;
  }
  refresh(r, docUri);
}

function jump(dir: 1 | -1): void {
  const editor = vscode.window.activeTextEditor;
  const found = reviewFor();
  const h = editor && found ? found[0].next(editor.selection.active.line, dir) : undefined;
  if (!editor || !found || !h) {
    return;
  }
  const line = Math.min(found[0].position(h).startLine, editor.document.lineCount - 1);
  editor.selection = new vscode.Selection(line, 0, line, 0);
  editor.revealRange(new vscode.Range(line, 0, line, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

async function cancel(): Promise<void> {
  const key = vscode.window.activeTextEditor?.document.uri.toString() ?? '';
  const r = running.get(key) ?? (running.size === 1 ? [...running.values()][0] : undefined);
  if (!r) {
    void vscode.window.showInformationMessage('specedit: no rewrite is running here');
    return;
  }
  await r.cancel();
}

class LensProvider implements vscode.CodeLensProvider {
  onDidChangeCodeLenses = lensesChanged.event;
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const r = reviews.get(doc.uri.toString());
    if (!r) {
      return [];
    }
    return reviewLenses(r, doc.lineCount).map((l) => {
      const args = l.args === 'none' ? [] : l.args === 'uri' ? [doc.uri] : [doc.uri, l.hunkId];
      return new vscode.CodeLens(new vscode.Range(l.line, 0, l.line, 0), { title: l.title, command: l.command, arguments: args });
    });
  }
}

export function activate(context: vscode.ExtensionContext): void {
  output = vscode.window.createOutputChannel('specedit');
  const answers = vscode.window.createOutputChannel('specedit answers');
  statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  statusItem.command = 'specedit.showOutput';
  statusItem.show();
  removedType = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.removedLineBackground'),
    textDecoration: 'line-through',
  });
  addedType = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('gitDecoration.addedResourceForeground'), fontStyle: 'italic' },
    before: { color: new vscode.ThemeColor('gitDecoration.addedResourceForeground'), fontStyle: 'italic' },
  });
  const lenses = new LensProvider();
  const cmd = (name: string, fn: (...args: never[]) => unknown) => vscode.commands.registerCommand(name, fn);
  context.subscriptions.push(
    output,
    answers,
    statusItem,
    removedType,
    addedType,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
      onDidChange: proposedChanged.event,
      provideTextDocumentContent: (uri) => reviews.get(decodeURIComponent(uri.query))?.proposed() ?? '',
    }),
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, lenses),
    vscode.languages.registerCodeLensProvider({ scheme: 'untitled' }, lenses),
    cmd('specedit.rewriteFile', () => rewrite(false)),
    cmd('specedit.rewriteSelection', () => rewrite(true)),
    cmd('specedit.cancel', () => cancel()),
    cmd('specedit.accept', (uri?: vscode.Uri, id?: number) => decide('accept', uri, id)),
    cmd('specedit.reject', (uri?: vscode.Uri, id?: number) => decide('reject', uri, id)),
    cmd('specedit.acceptAll', (uri?: vscode.Uri) => decideAll('accept', uri)),
    cmd('specedit.rejectAll', (uri?: vscode.Uri) => decideAll('reject', uri)),
    cmd('specedit.nextHunk', () => jump(1)),
    cmd('specedit.previousHunk', () => jump(-1)),
    cmd('specedit.showOutput', () => output.show(true)),
    cmd('specedit.ask', () => ask(getClient, answers)),
    cmd('specedit.showDiff', (uri?: vscode.Uri) => {
      const found = reviewFor(uri);
      return found && vscode.commands.executeCommand('vscode.diff', found[1], proposedUri(found[1]), 'specedit: proposed');
    }),
    vscode.window.onDidChangeActiveTextEditor((e) => {
      updateStatus();
      if (e && (e.document.uri.scheme === 'file' || e.document.uri.scheme === 'untitled')) {
        warmDocument(e.document, false);
      }
    }),
    vscode.window.onDidChangeVisibleTextEditors((editors) => {
      for (const e of editors) {
        paint(e, drawn.get(e.document.uri.toString()) ?? []);
      }
    }),
    vscode.workspace.onDidChangeTextDocument((e) => {
      const r = reviews.get(e.document.uri.toString());
      if (r && e.contentChanges.length > 0 && normalizeEol(e.document.getText()) !== r.current) {
        endReview(e.document.uri, 'the document was edited during the review; the review ended (its hunks were left as they were)');
      }
    }),
    proposedChanged,
    lensesChanged,
    { dispose: () => client?.dispose() },
  );
  updateStatus();
}

export function deactivate(): void {
  client?.dispose();
  client = null;
}
