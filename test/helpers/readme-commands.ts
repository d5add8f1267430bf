// The commands of the README's ```sh blocks, as a reader would paste them: a line ending in `\` joined
// with the next, comment-only lines and blank lines left out. Read from the README itself, so the test
// that runs them and the text cannot drift (test/readme/readme-walk.test.ts).
import { readFileSync } from 'node:fs';

export interface ReadmeCommand {
  /** 1-based line of the README where the command starts. */
  line: number;
  /** The heading the block sits under. */
  section: string;
  /** The command as written, continuation lines joined with a space. */
  text: string;
}

export function readmeCommands(readmePath: string): ReadmeCommand[] {
  const lines = readFileSync(readmePath, 'utf8').split('\n');
  const commands: ReadmeCommand[] = [];
  let section = '';
  let inSh = false;
  let pending: ReadmeCommand | undefined;
  lines.forEach((raw, i) => {
    if (!inSh) {
      if (/^#{1,6} /.test(raw)) section = raw.replace(/^#+ /, '');
      if (/^```sh\s*$/.test(raw)) inSh = true;
      return;
    }
    if (/^```\s*$/.test(raw)) {
      if (pending) commands.push(pending);
      pending = undefined;
      inSh = false;
      return;
    }
    const line = raw.trimEnd();
    if (!pending && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    const continued = line.endsWith('\\');
    const part = continued ? line.slice(0, -1).trimEnd() : line;
    if (pending) pending.text += ' ' + part.trim();
    else pending = { line: i + 1, section, text: part };
    if (!continued) {
      commands.push(pending);
      pending = undefined;
    }
  });
  return commands;
}

/** The command without its trailing comment (a `#` after whitespace, outside quotes). */
export function withoutComment(text: string): string {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) return text.slice(0, i).trimEnd();
  }
  return text.trimEnd();
}
