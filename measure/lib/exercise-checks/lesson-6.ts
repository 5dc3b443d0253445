/** Lesson 6's exercises that a run can check (measure/lib/exercises.ts). */
import type { ExerciseCheck } from '../exercises.ts';

export const LESSON_6: readonly ExerciseCheck[] = [];
