import { restDate } from './dates.js';

const dateFields = ['startTimestamp', 'endTimestamp', 'lastStatusUpdate', 'createdAt'] as const;

/** A `serviceRequestJob` as the spec writes it: its `_type`, dates in the REST form, absent values left out. */
export function serviceRequestJobShape(job: object): Record<string, unknown> {
  const shaped: Record<string, unknown> = { _type: 'svc.model.content.service.v1.request.representation.ContentRepresentationJob' };
  for (const [key, value] of Object.entries(job)) {
    if (value === null || value === undefined) continue;
    shaped[key] = (dateFields as readonly string[]).includes(key) ? restDate(value as string) : value;
  }
  return shaped;
}

export function asyncJobResponseShape(result: { duration: number; representationAccessId: string; state: string; serviceRequestJob: object }) {
  return {
    _type: 'svc.model.content.service.v1.request.async.status.AsyncJobResponse',
    duration: result.duration,
    representationAccessId: result.representationAccessId,
    state: result.state,
    serviceRequestJob: serviceRequestJobShape(result.serviceRequestJob),
  };
}

export function representationShape(representation: { createdAt: string }): Record<string, unknown> {
  return { _type: 'svc.model.content.service.v1.request.representation.Representation', ...representation, createdAt: restDate(representation.createdAt) };
}
