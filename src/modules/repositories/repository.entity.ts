import { defineEntity, p } from '@mikro-orm/core';

/** The share of the conversion limits a repository's PDF conversions may use (spec "Repository limits"). */
export const conversionLimits = ['LOW', 'MEDIUM', 'HIGH', 'UNLIMITED'] as const;
export type ConversionLimit = (typeof conversionLimits)[number];
/** What happens to a PDF over that share. */
export const conversionStrategies = ['LOW_PRIORITY', 'REPLACE', 'ERROR'] as const;
export type ConversionStrategy = (typeof conversionStrategies)[number];

/** Per-repository conversion limits and behaviour (spec "Repository limits"). */
export interface RepositoryLimits {
  maxNumberOfInputFiles?: number;
  maxInputFileSize?: number;
  maxTotalInputFileSize?: number;
  conversionLimit?: ConversionLimit;
  conversionStrategy?: ConversionStrategy;
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
