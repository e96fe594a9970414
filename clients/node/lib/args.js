// Reading a command line whose values may start with '-': a bearer token may
// (base64url), and node:util's parseArgs takes `--token -x...` for two options.

/**
 * `args` with each `--name VALUE` of the string options `names` written `--name=VALUE`,
 * so that parseArgs reads VALUE as the value whatever its first character.
 * @param {readonly string[]} args
 * @param {readonly string[]} names
 * @returns {string[]}
 */
export function joinValues(args, names) {
  const joined = [];
  for (let i = 0; i < args.length; i += 1) {
    const name = args[i].startsWith('--') ? args[i].slice(2) : null;
    if (name !== null && names.includes(name) && i + 1 < args.length) {
      joined.push(`--${name}=${args[i + 1]}`);
      i += 1;
    } else {
      joined.push(args[i]);
    }
  }
  return joined;
}
