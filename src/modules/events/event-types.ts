/**
 * Every kind of change the service records (DESIGN §11), declared once: the outbox, the audit trail's
 * `type` filter, the GraphQL enum, webhook subscriptions and docs/events.md all read this table.
 * A name is the subject and what happened to it; GraphQL enum values cannot hold dots, hence the case.
 */
export const eventTypeDescriptions = {
  ENTRY_CREATED: 'a folder or content was created (a copy too: details.copiedFrom)',
  ENTRY_UPDATED: 'a folder or content was renamed or its properties changed, or a content got new bytes',
  ENTRY_MOVED: 'a folder or content was moved to another folder (details.fromFolderId, details.toFolderId)',
  ENTRY_DELETED: 'a content or folder was deactivated (deleted without permanent)',
  ENTRY_RESTORED: 'a deactivated content was made active again',
  ENTRY_PURGED: 'a content or folder was removed for good, with its versions (and a folder with its subtree)',
  CONTENT_CHECKED_OUT: 'a working copy of a content was created',
  CONTENT_CHECKED_IN: 'a working copy became a new version (details.version)',
  CONTENT_CHECK_OUT_CANCELLED: 'a working copy was discarded',
  ENTRY_LOCKED: 'a content was locked',
  ENTRY_UNLOCKED: 'a content was unlocked',
  ENTRY_TAGGED: 'tags were added to or removed from an entry (details.added, details.removed)',
  ACL_CHANGED: "an entry's or the repository's access control list changed",
  JOB_STATE_CHANGED: 'a conversion or preview job changed state (details.jobId, details.jobName: convert, merge or thumbnail, details.state)',
  REPOSITORY_CREATED: 'a repository was created',
  REPOSITORY_UPDATED: "a repository's limits changed",
  REPOSITORY_DELETED: 'a repository was deleted with everything in it',
  POLICY_CREATED: 'a policy was created',
  POLICY_DELETED: 'a policy was deleted',
  POLICY_ASSIGNED: 'a policy was assigned to a folder',
  POLICY_UNASSIGNED: 'a policy was removed from a folder',
  USER_CREATED: 'a user was created',
  USER_DELETED: 'a user was deleted',
  GROUP_CREATED: 'a group was created',
  GROUP_DELETED: 'a group was deleted',
  GROUP_MEMBER_ADDED: 'a user was added to a group',
  GROUP_MEMBER_REMOVED: 'a user was removed from a group',
  LOGIN_SUCCEEDED: 'a user signed in',
  LOGIN_FAILED: 'a sign-in was refused (details.reason)',
} as const;

export type EventType = keyof typeof eventTypeDescriptions;
export const eventTypes = Object.keys(eventTypeDescriptions) as EventType[];

/**
 * The events of the administration domain (GET A/audit): repositories, policies, users, groups and
 * logins. The others are a repository's (GET C/audit), as are repository and policy-assignment events,
 * which name their repository.
 */
export const administrationEventTypes: EventType[] = eventTypes.filter((type) => /^(REPOSITORY|POLICY|USER|GROUP|LOGIN)_/.test(type));

/** A user's own sign-ins: the administration events a user who is not an administrator sees. */
export const loginEventTypes: EventType[] = ['LOGIN_SUCCEEDED', 'LOGIN_FAILED'];
