/**
 * Runs the work given for one key one at a time, in the order it was given. Commands on one
 * stream from this process queue behind each other, so each reads the revision the one before
 * it appended: concurrent writers in one process never lose the append's revision check to
 * each other (ten writers on one stream spent their retries and answered 409 to most requests).
 * Writers in other processes can still collide; the command handler's retries cover those.
 */
export type OneAtATime = <T>(key: string, work: () => Promise<T>) => Promise<T>;

const settled = () => undefined;

export function oneAtATime(): OneAtATime {
  // The last work given for each key, settled either way; a key with none waiting is removed.
  const tails = new Map<string, Promise<void>>();
  return (key, work) => {
    const before = tails.get(key);
    const result = before ? before.then(work) : work();
    const tail = result.then(settled, settled);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return result;
  };
}
