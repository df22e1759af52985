import { compileLinearRegex } from './linear-regex.js';

/**
 * Path patterns for grep: `*` matches within one segment, `**` across segments, `?` one
 * character, `{a,b}` alternatives. A pattern without `/` is matched against the file name
 * (`*.md` finds Markdown files anywhere); one with `/` against the path below the root.
 * The translation runs in the linear-time engine: `*a*a*a*…b` costs no more than `*b`.
 */
export function compileGlob(pattern: string): (path: string) => boolean {
  const trimmed = pattern
    .trim()
    .replace(/^\/+/, '')
    .replace(/^workspace\//, '');
  const byName = !trimmed.includes('/');
  const re = compileLinearRegex(`^${globBody(trimmed)}$`);
  return (path) => re.test(byName ? path.slice(path.lastIndexOf('/') + 1) : path.replace(/^\/+/, ''));
}

function globBody(glob: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else out += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return out + ')'.repeat(braces);
}
