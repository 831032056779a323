/**
 * Post-usage answers and validations given on the server for usage events of this station, as
 * a pulled delta brings them (FacilityDelta.answers, .validations), become the station's own
 * (station/pendingForms.ts adoptServerAnswers, station/serverValidations.ts). Apart from the
 * pull loop, which hands each delta on: a failure here is one event's, logged, and the pull
 * still counts.
 */
import { adoptServerAnswers } from '../station/pendingForms.js';
import { adoptServerResolution } from '../station/serverResolutions.js';
import { adoptServerValidation } from '../station/serverValidations.js';
import type { Station } from '../station/station.js';
import { nowIso } from '../util/ids.js';
import type { FacilityDelta } from './protocol.js';

export function adoptAnswers(station: Station, delta: FacilityDelta): void {
  for (const answer of delta.answers ?? []) {
    try {
      const taken = adoptServerAnswers(station.db, answer, nowIso());
      if (taken === null) continue;
      const tool = taken.tool;
      station.log.info(
        { usage: answer.usage_uuid },
        'sync: post-usage answers given on the server',
      );
      if (taken.replaced !== null) {
        station.log.warn(
          { usage: answer.usage_uuid, replaced: taken.replaced },
          "sync: this station's answers to a form answered on the server first were replaced by " +
            "the server's; the server keeps this station's for staff to read",
        );
      }
      if (taken.withdrawnBeyond.length) {
        station.log.warn(
          { usage: answer.usage_uuid, withdrawn: taken.withdrawnBeyond },
          'sync: the answers kept (given on the server) withdraw less than this station ' +
            'recorded from its own answers; staff should settle the difference',
        );
      }
      station.emit({ type: 'usage.changed', usage: answer.usage_uuid });
      station.emit({ type: 'tool.changed', tool });
    } catch (error) {
      station.log.warn({ err: error, usage: answer.usage_uuid }, 'sync: answers not taken');
    }
  }
}

/** Validations given by staff on the server for events of this station become its own. */
export function adoptValidations(station: Station, delta: FacilityDelta): void {
  for (const validation of delta.validations ?? []) {
    try {
      const taken = adoptServerValidation(station.db, validation, nowIso());
      if (taken === null) continue;
      station.log.info({ usage: validation.usage_uuid }, 'sync: validated on the server');
      station.emit({ type: 'usage.changed', usage: validation.usage_uuid });
      station.emit({ type: 'tool.changed', tool: taken.tool });
    } catch (error) {
      station.log.warn({ err: error, usage: validation.usage_uuid }, 'sync: validation not taken');
    }
  }
}

/** Problem reports resolved on the server (staff brought the tool back there) become resolved here. */
export function adoptResolutions(station: Station, delta: FacilityDelta): void {
  for (const resolution of delta.resolutions ?? []) {
    try {
      const taken = adoptServerResolution(station.db, resolution, nowIso());
      if (taken === null) continue;
      station.log.info(
        { report: resolution.report_uuid },
        'sync: a problem report resolved on the server (the tool brought back there)',
      );
      station.emit({ type: 'tool.changed', tool: taken.tool });
    } catch (error) {
      station.log.warn(
        { err: error, report: resolution.report_uuid },
        'sync: resolution not taken',
      );
    }
  }
}
