import { Entry, Resource } from '../modules/entries/entry.entity.js';
import { Repository } from '../modules/repositories/repository.entity.js';
import { Session, User } from '../modules/auth/user.entity.js';

export const entities = [Repository, User, Session, Resource, Entry];
