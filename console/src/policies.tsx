import { useState } from 'preact/hooks';
import { gql } from './api.js';
import { FolderSelect, useFolderChoices } from './folders.js';
import { useFail } from './notifications.js';
import { run, TableHead, useList } from './parts.js';

interface Policy {
  id: string;
  name: string;
  technicalName: string;
  kind: 'DEFAULT_TYPE' | 'INHERITANCE' | 'TYPE_RESTRICTION';
  fields: Record<string, unknown>;
}

interface Assignment {
  policyId: string;
  folderId: string;
  folderName: string;
}

const kinds = { DEFAULT_TYPE: 'Default type', INHERITANCE: 'Inheritance', TYPE_RESTRICTION: 'Type restriction' } as const;
type Kind = keyof typeof kinds;
const inheritanceFlags = { inheritTags: 'tags', inheritCommonProperties: 'common properties', inheritPolicies: 'policies', inheritAcl: 'ACL', inheritClassification: 'classification' } as const;
type Flag = keyof typeof inheritanceFlags;

const typeList = (text: string) =>
  text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);

/** What a policy does, in a few words, from its kind's creation fields. */
function describePolicy(policy: Policy): string {
  const fields = policy.fields;
  if (policy.kind === 'DEFAULT_TYPE') return `new contents are of type ${String(fields['defaultTypeName'])}`;
  if (policy.kind === 'INHERITANCE') {
    const handed = (Object.keys(inheritanceFlags) as Flag[]).filter((flag) => fields[flag]).map((flag) => inheritanceFlags[flag]);
    return handed.length > 0 ? `hands down ${handed.join(', ')}` : 'hands down nothing';
  }
  const allowed = (fields['allowedTypeNames'] as string[] | undefined) ?? [];
  const denied = (fields['deniedTypeNames'] as string[] | undefined) ?? [];
  return [allowed.length > 0 && `only ${allowed.join(', ')}`, denied.length > 0 && `not ${denied.join(', ')}`, fields['includeSubTypes'] && 'with subtypes'].filter(Boolean).join('; ') || 'restricts nothing';
}

/** Policies: each with what it does and the folders of the repository it is assigned to; new ones; assignment. */
export function Policies({ repository }: { repository: string }) {
  const fail = useFail();
  const repositoryId = `svc.repository.${repository}`;
  const [policies, loadPolicies] = useList<Policy>('query PolicyList { list: policies { id name technicalName kind fields } }', fail('Policies unavailable'));
  const [assignments, loadAssignments] = useList<Assignment>(
    'query Assignments($repositoryId: ID) { list: policyAssignments(repositoryId: $repositoryId) { policyId folderId folderName } }',
    fail('Policy assignments unavailable'),
    { repositoryId },
  );
  const folders = useFolderChoices(repository);
  const [assignment, setAssignment] = useState({ policyId: '', folderId: '' });
  const change = async (assign: boolean, policyId: string, folderId: string) => {
    const done = await run(
      () =>
        gql(`mutation Assignment($policyId: ID!, $repositoryId: ID!, $folderId: ID!) { ${assign ? 'assignPolicy' : 'unassignPolicy'}(policyId: $policyId, repositoryId: $repositoryId, folderId: $folderId) }`, {
          policyId,
          repositoryId,
          folderId,
        }),
      fail(assign ? 'Assigning the policy failed' : 'Unassigning the policy failed'),
    );
    if (done) void loadAssignments();
  };
  const remove = async (policy: Policy) => {
    if (!confirm(`Delete the policy ${policy.name}? It leaves every folder it is assigned to.`)) return;
    if (await run(() => gql('mutation DeletePolicy($ids: [ID!]) { deletePolicies(ids: $ids) { deleted } }', { ids: [policy.id] }), fail('Deleting the policy failed'))) {
      void loadPolicies();
      void loadAssignments();
    }
  };
  const folderPath = (assigned: Assignment) => folders.find((folder) => folder.id === assigned.folderId)?.path ?? assigned.folderName;
  return (
    <section class="card" aria-labelledby="policies-title">
      <h3 id="policies-title">Policies</h3>
      <div class="scroll">
        <table class="policies">
          <TableHead columns={['Name', 'Kind', 'Rule', `Folders in ${repository}`, { name: 'Actions', hidden: true }]} />
          <tbody>
            {policies.length === 0 && (
              <tr>
                <td colSpan={5}>No policy yet.</td>
              </tr>
            )}
            {policies.map((policy) => (
              <tr key={policy.id}>
                <td>{policy.name}</td>
                <td>{kinds[policy.kind]}</td>
                <td>{describePolicy(policy)}</td>
                <td>
                  {assignments
                    .filter((assigned) => assigned.policyId === policy.id)
                    .map((assigned) => (
                      <span class="assigned">
                        {folderPath(assigned)}{' '}
                        <button type="button" class="small" aria-label={`Unassign ${policy.name} from ${folderPath(assigned)}`} onClick={() => change(false, policy.id, assigned.folderId)}>
                          ×
                        </button>
                      </span>
                    ))}
                </td>
                <td>
                  <button type="button" class="danger" aria-label={`Delete the policy ${policy.name}`} onClick={() => remove(policy)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          void change(true, assignment.policyId, assignment.folderId);
        }}
      >
        <label>
          Policy
          <select value={assignment.policyId} required onChange={(event) => setAssignment({ ...assignment, policyId: event.currentTarget.value })}>
            <option value="">choose…</option>
            {policies.map((policy) => (
              <option value={policy.id}>{policy.name}</option>
            ))}
          </select>
        </label>
        <FolderSelect label="Folder" choices={folders} value={assignment.folderId} onChange={(folderId) => setAssignment({ ...assignment, folderId })} />
        <button type="submit">Assign</button>
      </form>
      <NewPolicy onCreated={() => void loadPolicies()} />
    </section>
  );
}

/** A new policy: its kind, its name and the kind's fields. */
function NewPolicy({ onCreated }: { onCreated: () => void }) {
  const fail = useFail();
  const [kind, setKind] = useState<Kind>('DEFAULT_TYPE');
  const [name, setName] = useState('');
  const [technicalName, setTechnicalName] = useState('');
  const [defaultTypeName, setDefaultTypeName] = useState('');
  const [flags, setFlags] = useState<Record<Flag, boolean>>({ inheritTags: true, inheritCommonProperties: true, inheritPolicies: true, inheritAcl: true, inheritClassification: true });
  const [restriction, setRestriction] = useState({ allowed: '', denied: '', includeSubTypes: true });
  const create = async (event: Event) => {
    event.preventDefault();
    const names = { name, technicalName: technicalName || undefined };
    const [mutation, inputType, input] =
      kind === 'DEFAULT_TYPE'
        ? ['createDefaultTypePolicy', 'CreateDefaultTypePolicyInput', { ...names, defaultTypeName }]
        : kind === 'INHERITANCE'
          ? ['createInheritancePolicy', 'CreateInheritancePolicyInput', { ...names, ...flags }]
          : ['createTypeRestrictionPolicy', 'CreateTypeRestrictionPolicyInput', { ...names, allowedTypeNames: typeList(restriction.allowed), deniedTypeNames: typeList(restriction.denied), includeSubTypes: restriction.includeSubTypes }];
    const done = await run(() => gql(`mutation NewPolicy($input: ${inputType}!) { ${mutation}(input: $input) { id } }`, { input }), fail('New policy failed'));
    if (done) {
      setName('');
      setTechnicalName('');
      onCreated();
    }
  };
  return (
    <form class="inline" onSubmit={create} aria-label="New policy">
      <label>
        Kind
        <select value={kind} onChange={(event) => setKind(event.currentTarget.value as Kind)}>
          {(Object.keys(kinds) as Kind[]).map((each) => (
            <option value={each}>{kinds[each]}</option>
          ))}
        </select>
      </label>
      <label>
        Policy name
        <input value={name} required maxLength={255} onInput={(event) => setName(event.currentTarget.value)} />
      </label>
      <label>
        Technical name
        <input value={technicalName} maxLength={128} placeholder="default: the name" onInput={(event) => setTechnicalName(event.currentTarget.value)} />
      </label>
      {kind === 'DEFAULT_TYPE' && (
        <label>
          Default type
          <input value={defaultTypeName} required onInput={(event) => setDefaultTypeName(event.currentTarget.value)} />
        </label>
      )}
      {kind === 'INHERITANCE' && (
        <fieldset class="inline">
          <legend>Hand down</legend>
          {(Object.keys(inheritanceFlags) as Flag[]).map((flag) => (
            <label class="check">
              <input type="checkbox" checked={flags[flag]} onChange={(event) => setFlags({ ...flags, [flag]: event.currentTarget.checked })} />
              {inheritanceFlags[flag]}
            </label>
          ))}
        </fieldset>
      )}
      {kind === 'TYPE_RESTRICTION' && (
        <>
          <label>
            Allowed types (comma-separated)
            <input value={restriction.allowed} onInput={(event) => setRestriction({ ...restriction, allowed: event.currentTarget.value })} />
          </label>
          <label>
            Denied types (comma-separated)
            <input value={restriction.denied} onInput={(event) => setRestriction({ ...restriction, denied: event.currentTarget.value })} />
          </label>
          <label class="check">
            <input type="checkbox" checked={restriction.includeSubTypes} onChange={(event) => setRestriction({ ...restriction, includeSubTypes: event.currentTarget.checked })} />
            Subtypes too
          </label>
        </>
      )}
      <button type="submit">Create policy</button>
    </form>
  );
}
