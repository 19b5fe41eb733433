'use strict';

/**
 * A minimal event emitter for the browser build, where node's `events`
 * module is not available. Same spirit as node's, fewer features: no
 * captureRejections, no max-listener warnings.
 */

class Emitter {
  constructor() {
    this._events = new Map();
  }

  /**
   * Register `listener` for `event`. Returns this, for chaining.
   */
  on(event, listener) {
    if (typeof listener !== 'function') {
      throw new TypeError('listener must be a function');
    }
    if (!this._events.has(event)) {
      this._events.set(event, []);
    }
    this._events.get(event).push(listener);
    return this;
  }

  /**
   * Remove one registration of `listener` (the most recent one) for `event`.
   * A listener added with `once` can be removed by passing the original.
   */
  off(event, listener) {
    const list = this._events.get(event);
    if (!list) {
      return this;
    }
    for (let i = list.length - 1; i >= 0; i -= 1) {
      if (list[i] === listener || list[i].original === listener) {
        list.splice(i, 1);
        break;
      }
    }
    if (list.length === 0) {
      this._events.delete(event);
    }
    return this;
  }

  /**
   * Register `listener` to be called for the next `event` only.
   */
  once(event, listener) {
    const wrapper = (...args) => {
      listener.apply(this, args);
    };
    wrapper.original = listener;
    return this.on(event, wrapper);
  }

  /**
   * Call every listener of `event` with `args`, in registration order.
   * Returns true when there was at least one listener.
   */
  emit(event, ...args) {
    const list = this._events.get(event);
    if (!list || list.length === 0) {
      if (event === 'error') {
        throw args[0] instanceof Error ? args[0] : new Error('unhandled error event');
      }
      return false;
    }
    for (const listener of [...list]) {
      listener.apply(this, args);
    }
    return true;
  }

  listenerCount(event) {
    const list = this._events.get(event);
    return list ? list.length : 0;
  }

  removeAllListeners(event) {
    if (event === undefined) {
      this._events.clear();
    } else {
      this._events.delete(event);
    }
    return this;
  }
}

/**
 * Resolve with the arguments of the next `event` (as an array), or reject
 * when 'error' is emitted first.
 */
function waitFor(emitter, event) {
  return new Promise((resolve, reject) => {
    const onEvent = (...args) => {
      emitter.off('error', onError);
      resolve(args);
    };
    const onError = (err) => {
      emitter.off(event, onEvent);
      reject(err);
    };
    emitter.once(event, onEvent);
    emitter.once('error', onError);
  });
}

module.exports = { Emitter, waitFor };
