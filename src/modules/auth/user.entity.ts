import { defineEntity, p } from '@mikro-orm/core';

export const roles = ['ADMIN', 'USER'] as const;
export type Role = (typeof roles)[number];

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    userName: p.string().primary(),
    passwordHash: p.string().hidden(),
    roles: p.array<Role>(),
    createdAt: p.datetime(),
  },
});

export class User extends UserSchema.class {}
UserSchema.setClass(User);

export const SessionSchema = defineEntity({
  name: 'Session',
  tableName: 'user_session',
  properties: {
    tokenHash: p.string().primary(),
    userName: p.string(),
    createdAt: p.datetime(),
    lastSeenAt: p.datetime(),
    expiresAt: p.datetime(),
  },
});

export class Session extends SessionSchema.class {}
SessionSchema.setClass(Session);
