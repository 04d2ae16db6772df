import { defineEntity, p } from '@mikro-orm/core';

/** Per-repository conversion limits and behaviour (spec "Repository limits"). */
export interface RepositoryLimits {
  maxNumberOfInputFiles?: number;
  maxInputFileSize?: number;
  maxTotalInputFileSize?: number;
  conversionLimit?: 'LOW' | 'MEDIUM' | 'HIGH' | 'UNLIMITED';
  conversionStrategy?: 'LOW_PRIORITY' | 'REPLACE' | 'ERROR';
}

export const RepositorySchema = defineEntity({
  name: 'Repository',
  tableName: 'repository',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    technicalName: p.string(),
    type: p.string().default('STANDARD'),
    fullTextEnabled: p.boolean().default(true),
    limits: p.json<RepositoryLimits>(),
    createdAt: p.datetime(),
    createdBy: p.string(),
    modifiedAt: p.datetime(),
    modifiedBy: p.string(),
    /** the root's ACL, `{principal: level}` (DESIGN §10; EVERYONE: all unless narrowed) */
    acl: p.json<Record<string, number>>(),
  },
});

export class Repository extends RepositorySchema.class {}
RepositorySchema.setClass(Repository);
