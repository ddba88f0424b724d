/**
 * `text` as one piece: V8 keeps a string built by joining strings (a template literal, `+`, and
 * JSON.stringify's own output past a few dozen characters) as the pieces and nodes joining them, a
 * tree of objects for the garbage collector to mark for as long as the string is kept. A string
 * the store keeps for long (a key, a settled hash's or set's text) is made flat once:
 * `normalize()` returns a flat copy; text that normalization would change is kept as it is.
 */
export function flat(text: string): string {
  const copy = text.normalize();
  return copy === text ? copy : text;
}
