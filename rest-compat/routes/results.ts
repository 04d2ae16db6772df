/** What the operations answer, as the shapes read it. */
export const page = (result: unknown) => result as { count: number; duration: number; entries: Record<string, unknown>[] };
export const node = (result: unknown) => result as Record<string, unknown>;
