import { defineEntity, p } from '@mikro-orm/core';

export const ResourceSchema = defineEntity({
  name: 'Resource',
  tableName: 'resource',
  properties: {
    id: p.string().primary(),
    repositoryId: p.string(),
    name: p.string(),
    mimeType: p.string(),
    fileSize: p.bigint('number'),
    md5: p.string(),
    storagePath: p.string(),
    /** 'pending' until the bytes are in place and the entry that uses them is committed */
    state: p.string().default('pending'),
    createdAt: p.datetime(),
    creator: p.string(),
  },
});

export class Resource extends ResourceSchema.class {}
ResourceSchema.setClass(Resource);

export const entryTypes = ['CONTENT', 'FOLDER'] as const;
export type EntryType = (typeof entryTypes)[number];
export const versionStatuses = ['WORKING_COPY', 'CURRENT'] as const;
export type VersionStatus = (typeof versionStatuses)[number];

export const EntrySchema = defineEntity({
  name: 'Entry',
  tableName: 'entry',
  properties: {
    id: p.string().primary(),
    repositoryId: p.string(),
    entryType: p.string().$type<EntryType>(),
    chronicalId: p.string(),
    name: p.string(),
    active: p.boolean().default(true),
    owner: p.string(),
    createdAt: p.datetime(),
    createdBy: p.string(),
    lastModifiedAt: p.datetime(),
    lastModifiedBy: p.string(),
    lockedAt: p.datetime().nullable(),
    lockedBy: p.string().nullable(),
    version: p.string().nullable(),
    versionMajor: p.integer().nullable(),
    versionMinor: p.integer().nullable(),
    versionStatus: p.string().$type<VersionStatus>().nullable(),
    isLatest: p.boolean().default(true),
    parentId: p.string().nullable(),
    predecessorId: p.string().nullable(),
    resourceId: p.string().nullable(),
    typeName: p.string().nullable(),
    properties: p.json<Record<string, unknown>>(),
    tags: p.array<string>(),
    comment: p.string().nullable(),
    /** the effective ACL (DESIGN §10): set by the database on insert (Migration20261127020000Acls), kept by acl_recompute */
    aclId: p.bigint('number').nullable(),
  },
});

export class Entry extends EntrySchema.class {}
EntrySchema.setClass(Entry);
