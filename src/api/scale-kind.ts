/** The `scale` subresource speaks autoscaling/v1 Scale for every scalable type. */
export const SCALE_API_VERSION = 'autoscaling/v1';

/** The OpenAPI definition of the Scale a `scale` subresource reads and writes. */
export const SCALE_DEFINITION = 'io.k8s.api.autoscaling.v1.Scale';
