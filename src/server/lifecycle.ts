import { logger } from '../logging/logger.js';

/** A long-lived part of the server: a cache, a stream reader, a controller, the listening servers. */
export interface Component {
  /** Resolves once the component is ready to be relied on (its first list cached, its port bound). */
  start?(): unknown;
  /** Ends the component's work; may resolve once it has ended. */
  stop?(): unknown;
}

/**
 * The server's components in the order they started. Each is started as it is added, so later ones
 * may rely on earlier ones; shutdown stops them in the reverse order, so nothing is stopped while a
 * component started after it still runs.
 */
export class Lifecycle {
  private readonly started: { name: string; component: Component }[] = [];
  private stopping: Promise<void> | undefined;

  /** Starts `component` and records it; returns it for chaining into a variable. */
  async start<C extends Component>(name: string, component: C): Promise<C> {
    await component.start?.();
    this.started.push({ name, component });
    return component;
  }

  /** The names of the started components, in start order. */
  names(): string[] {
    return this.started.map((s) => s.name);
  }

  /**
   * Stops every started component, last started first, each after the previous one's stop has
   * resolved. A component that fails to stop is logged and the others still stop. Calling it again
   * returns the first call's promise.
   */
  stopAll(): Promise<void> {
    this.stopping ??= (async () => {
      for (const { name, component } of [...this.started].reverse()) {
        try {
          await component.stop?.();
        } catch (error) {
          logger.warn('a component failed to stop', { component: name, error });
        }
      }
    })();
    return this.stopping;
  }
}
