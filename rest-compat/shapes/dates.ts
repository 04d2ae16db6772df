/** `yyyy-MM-ddTHH:mm:ss.SSS+0000` (spec "Dates"; DESIGN §0: UTC). */
export function restDate(value: string | Date | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const date = typeof value === 'string' ? new Date(value) : value;
  return `${date.toISOString().slice(0, 23)}+0000`;
}
