/**
 * Resources that kube-apiserver serves from another resource's store ("cohabiting" resources, as
 * its storage factory calls them). Of those kube 1.36 still serves, only events.k8s.io `events`
 * remains: it is the core `events` store seen through another API, so both APIs list, watch and
 * count the same objects with one resourceVersion sequence.
 */
const COHABITING: Readonly<Record<string, { group: string; resource: string }>> = {
  'events.k8s.io/events': { group: '', resource: 'events' },
};

/** The group and resource whose store holds the objects of `group`/`resource` (itself for most). */
export function storageResourceOf(group: string, resource: string): { group: string; resource: string } {
  return COHABITING[`${group}/${resource}`] ?? { group, resource };
}
