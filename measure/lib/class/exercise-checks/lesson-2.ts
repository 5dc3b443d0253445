/** Lesson 2's exercises that a run can check (measure/lib/class/exercises.ts). */
import type { ExerciseCheck } from '../exercises.ts';

export const LESSON_2: readonly ExerciseCheck[] = [];
