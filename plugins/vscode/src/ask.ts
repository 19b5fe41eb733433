/**
 * "specedit: Ask About Open Files" (`specedit.ask`): a question (input box) answered by the
 * server (answer/start) from the active editor's document and the other visible editors'
 * documents, shown in the "specedit answers" output channel as the model writes it (a
 * notification with Cancel meanwhile), then with one line per citation: ✓ when its quote is
 * in the file it cites, ✗ and the problem when not (./format `formatAnswer`). The protocol
 * is ./client's `ask`, tested by node.
 */
import * as vscode from 'vscode';
import { ContextFile, SpeceditClient } from './client';
import { formatAnswer } from './format';
import { normalizeEol } from './review';

/** The context files: the active editor's document first, then the other visible ones,
 * each once, by file path (an untitled one by its URI). */
export function contextFiles(): ContextFile[] {
  const docs: vscode.TextDocument[] = [];
  const active = vscode.window.activeTextEditor?.document;
  for (const d of [active, ...vscode.window.visibleTextEditors.map((e) => e.document)]) {
    if (d && (d.uri.scheme === 'file' || d.uri.scheme === 'untitled') && !docs.includes(d)) {
      docs.push(d);
    }
  }
  return docs.map((d) => ({
    path: d.uri.scheme === 'file' ? d.uri.fsPath : d.uri.toString(),
    text: normalizeEol(d.getText()),
  }));
}

/** Ask a question about the open files; `channel` shows the answer. */
export async function ask(getClient: () => Promise<SpeceditClient>, channel: vscode.OutputChannel): Promise<void> {
  const files = contextFiles();
  if (files.length === 0) {
    void vscode.window.showWarningMessage('specedit: open a file to ask about');
    return;
  }
  const question = await vscode.window.showInputBox({
    prompt: `specedit: ask about ${files.length} open file(s)`,
    placeHolder: 'What does this file do?',
  });
  if (!question || !question.trim()) {
    return;
  }
  channel.replace(formatAnswer(question, null));
  channel.show(true);
  try {
    const c = await getClient();
    const handle = c.ask({ question, contextFiles: files }, (p) => channel.replace(formatAnswer(question, p)));
    const done = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'specedit: answering', cancellable: true },
      (_progress, token) => {
        token.onCancellationRequested(() => void handle.cancel().catch(() => undefined));
        return handle.done;
      },
    );
    channel.replace(formatAnswer(question, done));
    if (done.status === 'done' && !done.quotesFound) {
      void vscode.window.showWarningMessage('specedit: some quotes of the answer are not in their files (✗)');
    } else if (done.status === 'error') {
      void vscode.window.showErrorMessage(`specedit: ${done.message}`);
    }
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    channel.replace(formatAnswer(question, null).replace('(asking…)', `(error: ${msg})`));
    void vscode.window.showErrorMessage(`specedit: ${msg}`);
  }
}
