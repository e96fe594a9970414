// What every game's module of the client shares: reading enum values by short name,
// checking option names, and space numbers.

/**
 * An enum value from a short name ('wisdom') or the enum's own name
 * ('TRIBES_BADGE_WISDOM').
 * @param {Readonly<Record<string, string>>} table
 * @param {string} value
 * @param {string} what for the error
 * @returns {string}
 */
export function enumValue(table, value, what) {
  const found = table[String(value).toLowerCase()];
  if (found !== undefined) return found;
  if (Object.values(table).includes(value)) return value;
  throw new TypeError(`${what} must be one of ${Object.keys(table).join(', ')}, not ${value}`);
}

/**
 * @param {Record<string, any>} options
 * @param {readonly string[]} known
 * @param {string} title
 */
export function checkKeys(options, known, title) {
  for (const key of Object.keys(options)) {
    if (options[key] !== undefined && !known.includes(key)) {
      throw new TypeError(`${key} is not an option of ${title}; its options: ${known.join(', ')}`);
    }
  }
}

/**
 * @param {number} value
 * @param {string} what
 * @returns {number}
 */
export function spaceNumber(value, what) {
  if (!Number.isInteger(value) || value < 0) {
    throw new TypeError(`${what} must be a number from 0, not ${value}`);
  }
  return value;
}
