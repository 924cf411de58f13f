import type { ExactField } from '../rest/selection.js';
import type { ChangeEvent, WatchTrigger } from '../storage/storage.js';
import { parsedObjects } from '../storage/parsed-changes.js';

/**
 * The storage trigger of a watch whose field selector requires `exact` on its kind's indexed field
 * (KindStrategy.watchIndexField): storage hands the watch only the changes of objects with that
 * value before or after. What it withholds the watch's filter would drop anyway (an exact term
 * fails on both versions); a change whose object does not decode reaches every such watch, as the
 * filter wants. `onLive` hands the storage's dispatch clock to the watch's progress.
 */
export function watchTrigger(exact: ExactField, onLive: WatchTrigger['onLive']): WatchTrigger {
  return { index: exact.key, value: exact.value, valuesOf: (event) => indexValues(exact, event), onLive };
}

function indexValues(exact: ExactField, event: ChangeEvent): readonly string[] | undefined {
  const { current, previous } = parsedObjects(event);
  if (current === undefined) return undefined;
  return previous === undefined ? [exact.of(current)] : [exact.of(current), exact.of(previous)];
}
