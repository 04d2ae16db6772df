import { z } from 'zod';
import { reasonStatus } from '../../src/errors.js';
import { types } from './entries.js';

/*
 * The REST answers as zod schemas: the OpenAPI document's components (openapi.ts), and what the test
 * suite checks every answer against (test/helpers/openapi.ts). Names, `_type`s and date forms are the
 * spec's ("Resources and their fields"); fields the spec leaves open stay open (`looseObject`).
 */

/** `yyyy-MM-ddTHH:mm:ss.SSS+0000` (spec "Dates"). */
export const restDateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{4}$/)
  .meta({ id: 'Date', description: 'yyyy-MM-ddTHH:mm:ss.SSS and a numeric zone offset (spec "Dates")', example: '2026-11-22T23:05:07.089+0000' });

const typed = <T extends string>(type: T) => z.literal(type);
const count = z.number().int().min(0);
const milliseconds = z.number().int().min(0).meta({ description: 'milliseconds' });

export const errorResponseSchema = z
  .strictObject({
    _type: typed('svc.model.error.ErrorResponse'),
    status: z.number().int(),
    reasonCode: z.enum(Object.keys(reasonStatus) as [keyof typeof reasonStatus]),
    message: z.string(),
    details: z.string().optional(),
  })
  .meta({
    id: 'ErrorResponse',
    description: 'every error (DESIGN §3): the HTTP status, a reason code and a message saying what and where',
    example: { _type: 'svc.model.error.ErrorResponse', status: 404, reasonCode: 'notFound', message: "content 'c-1' not found" },
  });

const folderFields = {
  id: z.string(),
  chronicalId: z.string().optional(),
  active: z.boolean(),
  entryType: z.enum(['CONTENT', 'FOLDER']),
  name: z.string(),
  owner: z.string(),
  createdAt: restDateSchema,
  createdBy: z.string(),
  lastModifiedAt: restDateSchema,
  lastModifiedBy: z.string(),
  typeName: z.string().optional(),
  tags: z.array(z.string()).optional(),
  properties: z.record(z.string(), z.unknown()).optional(),
  partition: z.string(),
};

const resourceSchema = z
  .looseObject({
    _type: typed(types.resource),
    id: z.string(),
    name: z.string().meta({ description: 'the file name' }),
    mimeType: z.string(),
    fileSize: count.meta({ description: 'bytes' }),
    md5: z.string().regex(/^[0-9a-f]{32}$/),
    created: restDateSchema,
    creator: z.string(),
    partition: z.string(),
    downloadUrl: z.string().optional(),
    resourceSource: z.looseObject({ _type: z.string(), id: z.string(), partition: z.string(), path: z.string() }),
  })
  .meta({ id: 'Resource' });

const contentFields = {
  lockedAt: restDateSchema.optional(),
  lockedBy: z.string().optional(),
  version: z.string().meta({ example: '1.0' }),
  versionStatus: z.enum(['CURRENT', 'WORKING_COPY']),
  comment: z.string().optional(),
  resource: resourceSchema.optional(),
};

/** Every field of `fields` optional: an entry of a page keeps only what includeProperties / excludeProperties leave (`_type` and `id` always). */
const projected = (fields: Record<string, z.ZodType>) => Object.fromEntries(Object.entries(fields).map(([name, schema]) => [name, schema.optional()]));

/** A folder with its parent, as far as the answer nests it. */
export const folderSchema: z.ZodType = z
  .looseObject({
    _type: typed(types.folder),
    ...folderFields,
    get parent() {
      return folderSchema.optional();
    },
    get children() {
      return z.array(entrySchema).optional().meta({ description: 'the virtual Folder.children: only when asked for (includeProperties=children or autoExclude=false)' });
    },
  })
  .meta({ id: 'Folder', description: 'spec "Folder"' });

export const contentSchema: z.ZodType = z
  .looseObject({
    _type: typed(types.content),
    ...folderFields,
    ...contentFields,
    parent: folderSchema.optional(),
    get predecessor() {
      return contentSchema.optional();
    },
  })
  .meta({
    id: 'Content',
    description: 'spec "Content": one version of a content',
    example: {
      _type: types.content,
      id: 'c9f1d2e4',
      chronicalId: 'c9f1d2e4',
      active: true,
      entryType: 'CONTENT',
      name: 'report.pdf',
      owner: 'admin',
      createdAt: '2026-11-22T23:05:07.089+0000',
      createdBy: 'admin',
      lastModifiedAt: '2026-11-22T23:05:07.089+0000',
      lastModifiedBy: 'admin',
      version: '1.0',
      versionStatus: 'CURRENT',
      partition: 'default',
    },
  });

export const entrySchema: z.ZodType = z.union([contentSchema, folderSchema]).meta({ id: 'Entry' });

/** An entry of a page: as projected by the search parameters. */
const pageEntrySchema = z
  .union([
    z.looseObject({ ...projected({ ...folderFields, ...contentFields, parent: folderSchema, predecessor: contentSchema }), _type: typed(types.content), id: z.string() }),
    z.looseObject({ ...projected({ ...folderFields, parent: folderSchema, children: z.array(entrySchema) }), _type: typed(types.folder), id: z.string() }),
  ])
  .meta({ id: 'PageEntry', description: 'a Content or Folder with the properties includeProperties, excludeProperties and autoExclude leave' });

export const entriesResponseSchema = z
  .looseObject({
    _type: typed(types.entries),
    count: count.meta({ description: 'the number of matches, not the page size' }),
    duration: milliseconds,
    entries: z.array(pageEntrySchema),
  })
  .meta({ id: 'EntriesResponse', description: 'spec "Search response"' });

export const serviceRequestJobSchema = z
  .looseObject({
    _type: typed('svc.model.content.service.v1.request.representation.ContentRepresentationJob'),
    id: z.string(),
    state: z.string(),
    contentIds: z.array(z.string()).optional(),
    startTimestamp: restDateSchema.optional(),
    endTimestamp: restDateSchema.optional(),
    lastStatusUpdate: restDateSchema.optional(),
  })
  .meta({ id: 'ServiceRequestJob', description: 'spec "Job status response": serviceRequestJob' });

export const asyncJobResponseSchema = z
  .looseObject({
    _type: typed('svc.model.content.service.v1.request.async.status.AsyncJobResponse'),
    duration: milliseconds,
    representationAccessId: z.string(),
    state: z.string(),
    serviceRequestJob: serviceRequestJobSchema,
  })
  .meta({ id: 'AsyncJobResponse', description: 'spec "Job status response"' });

export const jobsResponseSchema = z.looseObject({ count, duration: milliseconds, entries: z.array(serviceRequestJobSchema) }).meta({ id: 'JobsResponse' });

export const conversionResponseSchema = z
  .strictObject({ _type: typed('svc.model.content.service.v1.request.conversion.ConversionResponse'), duration: milliseconds, jobId: z.string() })
  .meta({ id: 'ConversionResponse', description: 'spec "Conversion response"' });

export const representationsResponseSchema = z
  .strictObject({
    _type: typed('svc.model.content.service.v1.request.representation.RepresentationsResponse'),
    count,
    entries: z.array(z.looseObject({ _type: typed('svc.model.content.service.v1.request.representation.Representation'), id: z.string(), createdAt: restDateSchema })),
  })
  .meta({ id: 'RepresentationsResponse' });

export const repositorySchema = z
  .looseObject({ id: z.string(), name: z.string(), technicalName: z.string(), fullTextEnabled: z.boolean(), createdAt: restDateSchema, modifiedAt: restDateSchema.nullish() })
  .meta({ id: 'Repository', description: 'a repository record' });
export const userSchema = z.strictObject({ userName: z.string(), roles: z.array(z.string()), createdAt: restDateSchema }).meta({ id: 'User', description: 'a user record (never a password)' });
export const groupSchema = z.looseObject({ name: z.string(), members: z.array(z.string()) }).meta({ id: 'Group' });
export const policySchema = z
  .looseObject({ id: z.string(), technicalName: z.string(), name: z.string(), kind: z.string(), createdAt: restDateSchema })
  .meta({ id: 'Policy', description: 'a policy record' });
export const contentTypeSchema = z.strictObject({ name: z.string(), parentTypeName: z.string().nullable() }).meta({ id: 'ContentType' });
export const deletedPoliciesSchema = z
  .strictObject({ _type: typed('svc.model.content.service.v1.request.async.status.AsyncJobResponse'), state: z.literal('Done'), duration: milliseconds, deleted: count })
  .meta({ id: 'DeletedPolicies' });

const aclEntry = z.strictObject({ principal: z.string(), permission: z.enum(['read', 'write', 'all']) });
export const aclSchema = z
  .strictObject({
    _type: typed('svc.model.content.Acl'),
    inherit: z.boolean().optional(),
    entries: z.array(aclEntry),
    effective: z.array(aclEntry.extend({ inheritedFrom: z.string().optional() })).optional(),
  })
  .meta({ id: 'Acl', description: 'an access control list (DESIGN §10)' });
export const permissionsSchema = z.strictObject({ permission: z.string().nullable(), actions: z.array(z.string()) }).meta({ id: 'Permissions' });

export const checkResponseSchema = z
  .looseObject({
    _type: typed('svc.model.deployment.service.repository.CheckResponse'),
    checkStatus: z.string(),
    entries: z.array(z.looseObject({ _type: typed('com.svc.model.check.service.CheckResultEntry'), name: z.string(), checkStatus: z.string() })),
  })
  .meta({ id: 'CheckResponse', description: 'spec "Check responses": connection check' });
export const deepCheckResponseSchema = z
  .looseObject({ _type: typed('svc.model.deployment.service.repository.DeepHealthCheckResponse'), checkStatus: z.string(), reportUrl: z.string().nullish() })
  .meta({ id: 'DeepHealthCheckResponse', description: 'spec "Check responses": deep health check' });
export const adminResponseSchema = z
  .strictObject({ _type: typed('svc.model.deployment.service.AdxAdminResponse'), _id: z.string(), duration: milliseconds })
  .meta({ id: 'AdxAdminResponse', description: 'spec "Check responses": the id of the asynchronous deep check job' });
export const statisticsResponseSchema = z
  .looseObject({
    _type: typed('svc.model.deployment.service.statistics.GetRepositoryStatisticsResponse'),
    name: z.string(),
    createdAt: restDateSchema,
    executionDate: restDateSchema,
    contentStatistics: z.looseObject({ numberOfContents: count, numberOfFolders: count }),
    cacheStatistics: z.looseObject({ numberOfRepresentations: count }),
  })
  .meta({ id: 'RepositoryStatistics', description: 'spec "Repository statistics response"' });
export const webhookSchema = z
  .strictObject({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()).meta({ description: 'the event types delivered (docs/events.md); empty: every type' }),
    repository: z.string().nullable(),
    state: z.enum(['active', 'failing']),
    lastError: z.string().nullable(),
    failingSince: restDateSchema.nullable(),
    createdAt: restDateSchema,
    createdBy: z.string(),
  })
  .meta({ id: 'Webhook', description: 'a webhook (DESIGN §11); its secret is never answered' });

export const auditEventsResponseSchema = z
  .strictObject({
    count,
    duration: milliseconds,
    entries: z.array(
      z
        .strictObject({
          id: z.string(),
          at: restDateSchema,
          repository: z.string().nullable(),
          type: z.string(),
          entryId: z.string().nullable(),
          chronicalId: z.string().nullable(),
          actor: z.string().nullable(),
          details: z.record(z.string(), z.unknown()),
        })
        .meta({ id: 'AuditEvent', description: 'one change as the audit trail keeps it (docs/events.md)' }),
    ),
  })
  .meta({ id: 'AuditEventsResponse', description: 'a page of the audit trail, newest first' });

export const jobIdSchema = z.strictObject({ jobId: z.string() }).meta({ id: 'JobId' });
export const htmlPage = { type: 'text/html', schema: z.string().meta({ description: 'an HTML page' }) };
