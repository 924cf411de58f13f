import type { Obj } from '../api/object-util.js';

/** The schema of one served version of a CRD, with the key its compiled validator is cached under. */
export interface CustomSchema {
  /** CRD uid, resourceVersion and version name: changes whenever the CRD does. */
  cacheKey: string;
  /** `openAPIV3Schema`; undefined when the version has none. */
  schema: Obj | undefined;
}

/** How the custom resources of one CRD convert between versions (`spec.conversion.strategy: Webhook`). */
export interface ConversionWebhook {
  crdName: string;
  /** `conversionReviewVersions`, in the CRD's order. */
  reviewVersions: string[];
  /**
   * POSTs a ConversionReview to the CRD's webhook and resolves with its parsed JSON answer; rejects
   * with the call's error (a WebhookCallError) when no 2xx JSON answer arrives within `timeoutMs`.
   */
  post(review: unknown, timeoutMs: number): Promise<unknown>;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * What one catalogue knows at run time about the custom resources it serves, beyond their
 * ResourceInfo: each served version's schema and each CRD's conversion webhook. The CRD registrar
 * that adds and removes the custom resources of a catalogue keeps these in step with them; readers
 * look them up by the `apiVersion` and `kind` an object carries. Each catalogue (each server, each
 * worker) has its own.
 */
export class CustomResourceFacts {
  /** Schemas by apiVersion, then kind: a read of a built-in kind looks up its apiVersion and stops. */
  private readonly schemas = new Map<string, Map<string, CustomSchema>>();
  private readonly conversions = new Map<string, ConversionWebhook>();

  /** Records (or, with undefined, forgets) the schema objects of KIND in APIVERSION are validated, pruned and defaulted by. */
  setSchema(apiVersion: string, kind: string, schema: CustomSchema | undefined): void {
    let kinds = this.schemas.get(apiVersion);
    if (schema === undefined) {
      kinds?.delete(kind);
      if (kinds?.size === 0) this.schemas.delete(apiVersion);
      return;
    }
    if (kinds === undefined) {
      kinds = new Map();
      this.schemas.set(apiVersion, kinds);
    }
    kinds.set(kind, schema);
  }

  /** The schema of KIND in APIVERSION, if a CRD serves it. */
  schemaOf(apiVersion: string, kind: string): CustomSchema | undefined {
    return this.schemas.get(apiVersion)?.get(kind);
  }

  /** Records (or, with undefined, forgets) the webhook converting KIND of GROUP between its versions. */
  setConversion(group: string, kind: string, conversion: ConversionWebhook | undefined): void {
    const key = `${group}/${kind}`;
    if (conversion === undefined) this.conversions.delete(key);
    else this.conversions.set(key, conversion);
  }

  /** Whether any CRD converts by webhook (a cheap check for the paths of every other kind). */
  anyConversion(): boolean {
    return this.conversions.size > 0;
  }

  /** The webhook converting objects of KIND in APIVERSION's group (any of its versions), if its CRD converts by webhook. */
  conversionOf(apiVersion: string, kind: string): ConversionWebhook | undefined {
    if (this.conversions.size === 0) return undefined;
    return this.conversions.get(`${groupOf(apiVersion)}/${kind}`);
  }
}
