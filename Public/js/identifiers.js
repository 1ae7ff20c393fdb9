// Case numbers and access codes as people type them; mirrors ReclaimCore's CaseNumber and AccessCode,
// so a mistyped number is caught in the page before any request (and before it counts as a failure).

// The Damm quasigroup of order 10, as in ReclaimCore.CaseNumber.
const DAMM = [
  [0, 3, 1, 7, 5, 9, 8, 6, 4, 2],
  [7, 0, 9, 2, 1, 5, 4, 8, 6, 3],
  [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
  [1, 7, 5, 0, 9, 8, 3, 4, 2, 6],
  [6, 1, 2, 3, 0, 4, 5, 9, 7, 8],
  [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
  [5, 8, 6, 9, 7, 2, 0, 1, 3, 4],
  [8, 9, 4, 5, 3, 6, 2, 0, 1, 7],
  [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
  [2, 5, 8, 1, 4, 3, 6, 7, 9, 0],
];

// Whitespace and the dashes ReclaimCore accepts (hyphen-minus, U+2010–2015, minus, small and full-width hyphens).
const SEPARATORS = /[\s\-\u2010-\u2015\u2212\uFE58\uFE63\uFF0D]/gu;

/**
 * Parses a typed case number: { digits } when it is 12 digits, the first not 0, passing the Damm check;
 * otherwise { error } with a sentence for the person typing it.
 */
export function parseCaseNumber(typed) {
  const text = String(typed ?? '').normalize('NFKC').replace(SEPARATORS, '');
  if (text === '') return { error: 'Enter your case number.' };
  if (!/^[0-9]+$/.test(text)) return { error: 'A case number has digits only.' };
  if (text.length !== 12) return { error: `A case number has 12 digits; this has ${text.length}.` };
  if (text[0] === '0') return { error: 'A case number does not start with 0: check it for a typo.' };
  let interim = 0;
  for (const digit of text) interim = DAMM[interim][Number(digit)];
  if (interim !== 0) return { error: 'This case number has a typo: check the digits against your confirmation.' };
  return { digits: text };
}

/** "4821 0937 5512": easier to read aloud. */
export function groupCaseNumber(digits) {
  return String(digits).replace(/(\d{4})(?=\d)/g, '$1 ');
}

const ACCESS_ALPHABET = /^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{16}$/;

/** The 16 canonical symbols of a typed access code (any case, spaces and dashes ignored, I/L → 1, O → 0), or null. */
export function normalizeAccessCode(typed) {
  const text = String(typed ?? '').normalize('NFKC').replace(SEPARATORS, '').toUpperCase()
    .replace(/[IL]/g, '1').replace(/O/g, '0');
  return ACCESS_ALPHABET.test(text) ? text : null;
}
