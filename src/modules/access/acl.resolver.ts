import { Arg, Authorized, Ctx, Directive, Field, FieldResolver, ID, InputType, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { EntryNode, EntryTypeEnum } from '../entries/entry.types.js';
import type { Entry } from '../entries/entry.entity.js';
import { entryScope } from '../entries/scope-of-request.js';
import { repositoryNameOf } from '../repositories/operations.js';
import { graphqlEnum } from '../../graphql/enums.js';
import { everyone } from '../auth/principal.js';
import { permissions, type Permission } from './acl.js';
import { aclViewOf, changeEntryAcl, changeRootAcl, entryAcl, entryPermissions, permissionsOn, rootAcl, type AclEntry, type AclInput as AclInputFields, type AclView, type Permissions, type RootAclInput } from './acl-operations.js';

/** The permissions of DESIGN §10 (acl.ts declares them), as the REST layer writes them (lower case). */
export const PermissionEnum = graphqlEnum(permissions, {
  name: 'Permission',
  description: 'read ⊂ write ⊂ all (DESIGN §10)',
  valuesConfig: {
    read: { description: 'see it in any answer, search, download, representations, versions' },
    write: { description: 'change metadata, tags, versions, locks, convert; on a folder also create, move and copy into it' },
    all: { description: 'delete, restore, purge, change its ACL' },
  },
});

@Directive('@shareable')
@ObjectType('AclEntry', { description: 'a principal and its permission' })
export class AclEntryNode {
  @Field(() => String, { description: `a user name, group:<name> or ${everyone}` }) principal!: string;
  @Field(() => PermissionEnum) permission!: Permission;
}

@ObjectType('EffectiveAclEntry', { description: "a principal's permission in effect on an entry, and where it comes from" })
export class EffectiveAclEntryNode extends AclEntryNode {
  @Field(() => String, { nullable: true, description: "the folder (its id) or repository (its repositoryId) it is inherited from; null: the entry's own" })
  inheritedFrom?: string;
}

@ObjectType('Acl', { description: "an entry's access control list (DESIGN §10)" })
export class AclNode {
  @Field(() => Boolean, { description: "whether it inherits its folder's effective ACL" }) inherit!: boolean;
  @Field(() => [AclEntryNode], { description: 'its own entries' }) entries!: AclEntryNode[];
  @Field(() => [EffectiveAclEntryNode], { description: 'its own and inherited entries in effect, the highest permission of each principal' })
  effective!: EffectiveAclEntryNode[];
}

@ObjectType('RepositoryAcl', { description: "a repository's root ACL: what every entry inherits unless stopped" })
export class RepositoryAclNode {
  @Field(() => [AclEntryNode]) entries!: AclEntryNode[];
}

@ObjectType('Permissions', { description: "the caller's permission on an entry and the verbs it allows (CMIS allowable actions)" })
export class PermissionsNode {
  @Field(() => PermissionEnum, { nullable: true }) permission!: Permission | null;
  @Field(() => [String]) actions!: string[];
}

@InputType({ description: 'a principal and its permission' })
export class AclEntryInput implements AclEntry {
  @Field(() => String, { description: `a user name, group:<name> or ${everyone}` }) principal!: string;
  @Field(() => PermissionEnum) permission!: Permission;
}

@InputType({ description: "an entry's own ACL entries (they replace the ones it has), and whether it inherits" })
export class AclInput implements AclInputFields {
  @Field(() => Boolean, { nullable: true, description: 'absent: as it is' }) inherit?: boolean;
  @Field(() => [AclEntryInput]) entries!: AclEntryInput[];
}

@InputType({ description: "a repository's root ACL entries (they replace the ones it has)" })
export class RepositoryAclInput implements RootAclInput {
  @Field(() => [AclEntryInput]) entries!: AclEntryInput[];
}

/** GraphQL's null for an absent optional field, as the module's schema reads it. */
const withoutNulls = <T extends object>(input: T) => Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null && value !== undefined));

@Authorized()
@Resolver(() => EntryNode)
export class EntryAclResolver {
  @FieldResolver(() => AclNode, { description: "the entry's ACL: own entries, inheritance, and what is in effect" })
  async acl(@Root() entry: Entry, @Ctx() context: RequestContext): Promise<AclView> {
    return aclViewOf(await entryScope(context, repositoryNameOf(entry.repositoryId)), entry.id);
  }

  @FieldResolver(() => PermissionEnum, { nullable: true, description: "the caller's permission on the entry" })
  async myPermission(@Root() entry: Entry, @Ctx() context: RequestContext): Promise<Permission | null> {
    return (await permissionsOn(await entryScope(context, repositoryNameOf(entry.repositoryId)), entry)).permission;
  }
}

@Authorized()
@Resolver()
export class AclResolver {
  @Query(() => AclNode, { description: "an entry's ACL (404 when the caller may not read it)" })
  async acl(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of the folder or content' }) id: string,
    @Arg('entryType', () => EntryTypeEnum, { nullable: true, description: 'the kind the entry must be (else 404)' }) entryType: EntryTypeEnum | undefined,
    @Ctx() context: RequestContext,
  ): Promise<AclView> {
    return entryAcl(await entryScope(context, repository), id, entryType ?? undefined);
  }

  @Query(() => PermissionsNode, { description: "the caller's permission on an entry and the verbs it allows" })
  async permissions(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of the folder or content' }) id: string,
    @Arg('entryType', () => EntryTypeEnum, { nullable: true, description: 'the kind the entry must be (else 404)' }) entryType: EntryTypeEnum | undefined,
    @Ctx() context: RequestContext,
  ): Promise<Permissions> {
    return entryPermissions(await entryScope(context, repository), id, entryType ?? undefined);
  }

  @Mutation(() => AclNode, { description: "replaces an entry's own ACL entries (the permission all is needed: 403)" })
  async setAcl(
    @Arg('repository', () => String, { description: "the repository's name" }) repository: string,
    @Arg('id', () => ID, { description: 'the id of the folder or content' }) id: string,
    @Arg('entryType', () => EntryTypeEnum, { nullable: true, description: 'the kind the entry must be (else 404)' }) entryType: EntryTypeEnum | undefined,
    @Arg('input', () => AclInput) input: AclInput,
    @Ctx() context: RequestContext,
  ): Promise<AclView> {
    return changeEntryAcl(await entryScope(context, repository), id, withoutNulls(input), entryType ?? undefined);
  }
}

@Authorized('ADMIN')
@Resolver()
export class RepositoryAclResolver {
  @Query(() => RepositoryAclNode, { description: "a repository's root ACL" })
  async repositoryAcl(@Arg('repositoryId', () => String) repositoryId: string, @Ctx() context: RequestContext) {
    return rootAcl(context.services, context.em, repositoryId);
  }

  @Mutation(() => RepositoryAclNode, { description: "replaces a repository's root ACL; every entry that inherits it follows at once" })
  async setRepositoryAcl(@Arg('repositoryId', () => String) repositoryId: string, @Arg('input', () => RepositoryAclInput) input: RepositoryAclInput, @Ctx() context: RequestContext) {
    return changeRootAcl(context.services, context.em, await context.principal(), repositoryId, withoutNulls(input));
  }
}
