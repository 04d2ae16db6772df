import { useEffect, useState } from 'preact/hooks';
import { gql } from './api.js';
import { TableHead } from './parts.js';

interface AuditEvent {
  id: string;
  at: string;
  type: string;
  actor?: string | null;
  details: Record<string, unknown>;
}

/** The audit trail of an entry, newest first. */
export function AuditTrail({ repository, entryId }: { repository: string; entryId: string }) {
  const [events, setEvents] = useState<{ count: number; entries: AuditEvent[] }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    gql<{ auditEvents: { count: number; entries: AuditEvent[] } }>(
      'query Audit($repository: String, $entryId: ID) { auditEvents(repository: $repository, entryId: $entryId, limit: 50) { count entries { id at type actor details } } }',
      { repository, entryId },
    )
      .then(({ auditEvents }) => setEvents(auditEvents))
      .catch((failure: Error) => setError(failure.message));
  }, [repository, entryId]);
  if (error) return <p class="error">{error}</p>;
  if (!events) return <p>Loading…</p>;
  return (
    <div class="scroll">
      <table>
        <caption class="meta">{events.count} events</caption>
        <TableHead columns={['When', 'What', 'Who', { name: 'Details', wide: true }]} />
        <tbody>
          {events.entries.map((event) => (
            <tr key={event.id}>
              <td>{new Date(event.at).toLocaleString()}</td>
              <td>{event.type}</td>
              <td>{event.actor ?? ''}</td>
              <td class="wide">
                <code>{JSON.stringify(event.details)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
