/** Lesson 4's exercises 11 to 17 (the Traffic Lab, nginx's log, capacity) that a run can check (measure/lib/exercises.ts). */
import type { ExerciseCheck } from '../exercises.ts';

export const LESSON_4_CAPACITY: readonly ExerciseCheck[] = [];
