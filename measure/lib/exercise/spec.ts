/**
 * A write-the-fix exercise as data: the file a student starts from, what the lesson's server takes
 * from it, the reference fix, what a right fix prints, and the battery that checks the fix's
 * answers before anything is timed. measure/lib/exercise/specs.ts lists them; an experiment names
 * the one its --mine run measures, and the harness (fix-run.ts) does the rest.
 */
import type { FixAnswers } from '../../../results/report/answers.ts';
import type { Progress } from '../harness/progress.ts';
import type { Lab } from '../process/lab.ts';

/** What a battery gets: the run's lab (it starts and stops its own servers), and the fix's file. */
export interface AnswersContext {
  lab: Lab;
  progress: Progress;
  quick: boolean;
  /** The fix's file as the lesson's server takes it: absolute; several joined by commas (--handlers). */
  file: string;
}

export interface ExerciseSpec {
  /** Names the exercise in saved runs and the roll-up: `lesson-3`, `lesson-10/redos`. */
  id: string;
  lesson: number;
  /** The experiment whose --mine run measures it. */
  experiment: string;
  /** How a student runs it, for the roll-up's tables: `blocking --mine`. */
  command: string;
  /** The kit's starting point, from the project root; copied to `student` on first use. */
  start: string;
  /** The student's copy, from exercises/ (NSL_EXERCISES_DIR moves the folder): `lesson-3/verify.ts`. */
  student: string;
  /** What the lesson's server takes from the student's file. */
  export: { name: string; kind: 'function' | 'object' };
  /** The reference fix, from the project root: it passes the battery and prints `expected`. */
  reference: string;
  /** expected-output/<expected>.txt: the lines a right fix prints, its answers line first. */
  expected: string;
  /** What a right fix does, after the expected file's name: `your check off the event loop`. */
  does: string;
  /** The shape lines' first token, for the answers line: the experiment's name. */
  group: string;
  /**
   * The correctness battery: sends the same requests to the healthy code and to the fix, on
   * servers it starts and stops itself, and compares each pair of answers.
   */
  answers(ctx: AnswersContext): Promise<FixAnswers>;
  /**
   * The battery is the exercise's whole check, and the experiment's own run is not made after it:
   * lesson 7's 60 loans one after another would count what the battery's bursts count, without the race.
   */
  answersOnly?: boolean;
  /** Likely causes in the fix's terms, over the experiment's own (by line key, or its first token). */
  hints?: Record<string, string>;
  /** The experiment's shape lines a fix run keeps (default: all of them); stages keeps part 4's. */
  keeps?(line: string): boolean;
}

/** The fix an --mine (or --handlers) run measures: its exercise, its file, and whether to copy the start. */
export interface FixTarget {
  spec: ExerciseSpec;
  /** Absolute; several joined by commas for --handlers. */
  file: string;
  /** Copy the starting point to `file` when there is none yet (--mine); not for --handlers. */
  copy: boolean;
}
