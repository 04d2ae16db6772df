import { Session, User } from './auth/user.entity.js';
import { Entry, Resource } from './entries/entry.entity.js';
import { Repository } from './repositories/repository.entity.js';

/**
 * The ORM's entities, handed to `createOrm` by whoever opens the database (src/db knows no module).
 * The entity files alone, not the capabilities' faces: those load TypeGraphQL types (which want
 * reflect-metadata loaded first), and a connection for the ORM's entities needs no GraphQL.
 */
export const entities = [Repository, User, Session, Resource, Entry];
