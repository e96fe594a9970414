// Regenerate the TypeScript of the wire contract into a temporary directory and fail if
// any file differs from src/gen (or is missing or extra): the committed code must be what
// `npm run generate` makes from ../../protos.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const scratch = mkdtempSync(path.join(tmpdir(), 'totem-web-gen-'));

function files(dir, prefix = '') {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? files(full, `${prefix}${entry}/`) : [`${prefix}${entry}`];
  });
}

try {
  execFileSync('npx', ['buf', 'generate', '../../protos', '--template', 'buf.gen.yaml', '--output', scratch], {
    cwd: here,
    stdio: 'inherit',
  });
  const fresh = path.join(scratch, 'src', 'gen');
  const committed = path.join(here, 'src', 'gen');
  const expected = new Set(files(fresh));
  const actual = new Set(files(committed));
  const problems = [];
  for (const file of expected) {
    if (!actual.has(file)) problems.push(`missing: src/gen/${file}`);
    else if (!readFileSync(path.join(fresh, file)).equals(readFileSync(path.join(committed, file)))) {
      problems.push(`differs: src/gen/${file}`);
    }
  }
  for (const file of actual) if (!expected.has(file)) problems.push(`extra: src/gen/${file}`);
  if (problems.length) {
    console.error(`src/gen is not what \`npm run generate\` makes; run it and commit:\n  ${problems.join('\n  ')}`);
    process.exitCode = 1;
  } else {
    console.log(`src/gen matches ../../protos (${expected.size} files).`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
