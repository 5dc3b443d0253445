/** The blocking experiment's --predict questions (results/report/predictions.ts), answered by its measures. */
import { SHARE_OF_HEAVY, type Question } from '../report/predictions.ts';

export const predictions: Question[] = [
  {
    id: 'blocking-light-wait',
    ask: "scrypt runs on the event loop (scryptSync). A light /books request sent 50 ms later: how much of the heavy request's remaining time does it wait?",
    measure: 'blocking-light-share-of-heavy',
    choices: SHARE_OF_HEAVY,
    explain:
      'Until scryptSync returns, no other handler runs: the light request waits in the accept queue for the rest of the heavy one.',
    lesson: 'lessons/03-runtime.md, Experiment 1, "Why"',
  },
  {
    id: 'pooled-light-wait',
    ask: "The same with crypto.scrypt (libuv's thread pool): how much of the heavy request's remaining time does the light request wait?",
    measure: 'pooled-light-share-of-heavy',
    choices: SHARE_OF_HEAVY,
    explain:
      'The hash runs on a pool thread and the event loop goes on serving /books, so the light request answers in a few ms.',
    lesson: 'lessons/03-runtime.md, Experiment 1, "Why"',
  },
  {
    id: 'heavy-duration',
    ask: 'Does moving scrypt to the thread pool make the heavy request itself faster? Its time on the event loop, divided by its time on the pool:',
    measure: 'heavy-blocking-vs-pooled',
    choices: [
      { label: 'under 0.5×: on the pool it takes more than twice as long', to: 0.5 },
      { label: '0.5× to 2×: about the same either way', from: 0.5, to: 2 },
      { label: '2× or more: on the pool it takes half the time or less', from: 2 },
    ],
    explain:
      'The same hash costs the same CPU on either thread: moving work off the loop stops it holding others up, it does not make it cheaper.',
    lesson: 'lessons/03-runtime.md, Experiment 1, "Why"',
  },
];
