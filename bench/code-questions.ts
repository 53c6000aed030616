/**
 * The code index's question set: what a developer new to RxJS 7.8.2 (the pinned `rxjs`
 * devDependency, its published sources) would ask, each with the files that answer it. Written by
 * reading those files; the questions say what the developer wants in their own words rather than
 * naming the function they do not know yet. A file is relevant when it holds the code that does
 * the thing asked (not a re-export, a test or a type-only declaration). Paths are relative to the
 * package root, which bench/code.ts serves as the repository.
 *
 * The set is a regression gate (bench/code.ts): do not trim it to make a figure pass.
 */
export interface Question {
  q: string;
  relevant: string[];
}

const I = "src/internal";

export const QUESTIONS: Question[] = [
  // Using operators: the developer knows the behaviour, not the name.
  { q: "wait until the user has stopped typing for a moment before emitting the latest search term", relevant: [`${I}/operators/debounceTime.ts`] },
  { q: "cancel the previous in-flight request when a new value arrives and only keep the newest inner stream", relevant: [`${I}/operators/switchMap.ts`] },
  { q: "ignore new clicks while the previous save request is still running", relevant: [`${I}/operators/exhaustMap.ts`] },
  { q: "run inner requests one after another in order, starting the next only when the previous one finished", relevant: [`${I}/operators/concatMap.ts`] },
  { q: "limit how many inner subscriptions run at the same time and buffer the rest until a slot frees up", relevant: [`${I}/operators/mergeInternals.ts`, `${I}/operators/mergeMap.ts`] },
  { q: "resubscribe to a failing source a limited number of times with a delay between attempts", relevant: [`${I}/operators/retry.ts`] },
  { q: "let the first value through and then drop everything for a fixed time window (rate limiting)", relevant: [`${I}/operators/throttleTime.ts`, `${I}/operators/throttle.ts`] },
  { q: "share one subscription between many subscribers and replay the last few values to late subscribers", relevant: [`${I}/operators/shareReplay.ts`] },
  { q: "keep a shared connection alive only while someone is subscribed and reset it when the count drops to zero", relevant: [`${I}/operators/share.ts`] },
  { q: "only emit a value when it differs from the one emitted just before it", relevant: [`${I}/operators/distinctUntilChanged.ts`] },
  { q: "accumulate state over time and emit every intermediate result, like reduce but running", relevant: [`${I}/operators/scan.ts`, `${I}/operators/scanInternals.ts`] },
  { q: "split a stream into separate streams by a key computed from each value", relevant: [`${I}/operators/groupBy.ts`] },
  { q: "collect values into arrays and emit a batch every few hundred milliseconds", relevant: [`${I}/operators/bufferTime.ts`] },
  { q: "run cleanup code whenever the stream completes, errors or the subscriber unsubscribes", relevant: [`${I}/operators/finalize.ts`] },
  { q: "perform logging side effects for each notification without changing the values", relevant: [`${I}/operators/tap.ts`] },
  { q: "stop taking values from a stream as soon as another notifier stream emits, for example when a component is destroyed", relevant: [`${I}/operators/takeUntil.ts`] },
  { q: "emit each value together with the previous value as a pair", relevant: [`${I}/operators/pairwise.ts`] },
  { q: "emit a fallback value when the source completes without emitting anything", relevant: [`${I}/operators/defaultIfEmpty.ts`] },
  { q: "fail with an error if the source takes too long to produce its next value", relevant: [`${I}/operators/timeout.ts`] },
  { q: "replace an error with another stream so the subscriber keeps going", relevant: [`${I}/operators/catchError.ts`] },
  { q: "check whether two streams produce the same values in the same order", relevant: [`${I}/operators/sequenceEqual.ts`] },
  { q: "measure how much time elapsed between consecutive emissions", relevant: [`${I}/operators/timeInterval.ts`] },

  // Creating streams.
  { q: "wait for several streams to finish and then emit all of their last values together", relevant: [`${I}/observable/forkJoin.ts`] },
  { q: "whenever any of several streams emits, emit an array of the most recent value from each", relevant: [`${I}/observable/combineLatest.ts`] },
  { q: "mirror whichever source stream emits first and unsubscribe from the others", relevant: [`${I}/observable/race.ts`] },
  { q: "turn DOM element events or a Node event emitter's listeners into a stream", relevant: [`${I}/observable/fromEvent.ts`] },
  { q: "wrap a Node style function whose callback receives an error first and then a result", relevant: [`${I}/observable/bindNodeCallback.ts`, `${I}/observable/bindCallbackInternals.ts`] },
  { q: "start emitting increasing numbers after an initial delay and then at a fixed period", relevant: [`${I}/observable/timer.ts`] },
  { q: "create a disposable resource that lives exactly as long as the subscription", relevant: [`${I}/observable/using.ts`] },
  { q: "emit a value on every browser animation frame along with the elapsed time", relevant: [`${I}/observable/dom/animationFrames.ts`] },
  { q: "make an HTTP request with fetch that is aborted when the subscriber unsubscribes", relevant: [`${I}/observable/dom/fetch.ts`] },
  { q: "open a websocket connection and multiplex several logical channels over the same socket", relevant: [`${I}/observable/dom/WebSocketSubject.ts`] },
  { q: "send an XMLHttpRequest and report upload progress events to the subscriber", relevant: [`${I}/ajax/ajax.ts`] },
  { q: "how the body of an XHR response is read depending on its response type, including old browsers that lack the response property", relevant: [`${I}/ajax/getXHRResponse.ts`] },
  { q: "convert a promise, array, iterable, async iterable or readable stream into an observable", relevant: [`${I}/observable/innerFrom.ts`] },
  { q: "turn a web ReadableStream into an async generator that releases its reader lock when done", relevant: [`${I}/util/isReadableStreamLike.ts`] },
  { q: "get a promise that resolves with the first value a stream emits", relevant: [`${I}/firstValueFrom.ts`] },

  // Subjects and the core types.
  { q: "a subject that holds a current value and hands it immediately to every new subscriber", relevant: [`${I}/BehaviorSubject.ts`] },
  { q: "a subject that emits only the final value, and only once the source completes", relevant: [`${I}/AsyncSubject.ts`] },
  { q: "how a replay buffer drops stored values that are older than the configured time window", relevant: [`${I}/ReplaySubject.ts`] },
  { q: "what happens when you push a value into a subject after it has been unsubscribed and closed", relevant: [`${I}/Subject.ts`, `${I}/util/ObjectUnsubscribedError.ts`] },
  { q: "how teardown works on unsubscribe: releasing child subscriptions and finalizers and collecting the errors they throw", relevant: [`${I}/Subscription.ts`, `${I}/util/UnsubscriptionError.ts`] },
  { q: "where an error goes when the subscriber passed no error callback", relevant: [`${I}/Subscriber.ts`, `${I}/util/reportUnhandledError.ts`] },
  { q: "global settings for handling unhandled errors and notifications that arrive after a subscriber stopped", relevant: [`${I}/config.ts`] },
  { q: "how an operator creates a new stream bound to its source and wraps the downstream subscriber", relevant: [`${I}/util/lift.ts`, `${I}/operators/OperatorSubscriber.ts`] },
  { q: "compose several unary functions left to right into one function", relevant: [`${I}/util/pipe.ts`] },
  { q: "represent next, error and complete events as plain objects that can be replayed later", relevant: [`${I}/Notification.ts`, `${I}/operators/materialize.ts`] },
  { q: "the error thrown when a stream completes without any value but one was required", relevant: [`${I}/util/EmptyError.ts`] },
  { q: "pull an optional trailing scheduler or result selector off a variadic argument list", relevant: [`${I}/util/args.ts`] },

  // Schedulers and testing.
  { q: "schedule work on the microtask queue using resolved promises instead of timers", relevant: [`${I}/scheduler/AsapAction.ts`, `${I}/util/Immediate.ts`] },
  { q: "run scheduled work synchronously in a queue so recursive scheduling does not grow the call stack", relevant: [`${I}/scheduler/QueueAction.ts`, `${I}/scheduler/QueueScheduler.ts`] },
  { q: "why repeating actions reuse a single interval timer instead of creating a new timeout each time", relevant: [`${I}/scheduler/AsyncAction.ts`] },
  { q: "a scheduler that advances virtual time and runs queued actions instantly without real waiting", relevant: [`${I}/scheduler/VirtualTimeScheduler.ts`] },
  { q: "parse marble diagram strings into timed notification frames for tests", relevant: [`${I}/testing/TestScheduler.ts`] },
  { q: "swap out setTimeout and setInterval so tests can patch the timers the library uses", relevant: [`${I}/scheduler/timeoutProvider.ts`, `${I}/scheduler/intervalProvider.ts`] },
];
