import { metrics } from '@opentelemetry/api';
import { instrument, type InstrumentOptions, type Disposer } from 'steadfast/otel';

const options: InstrumentOptions = { meterProvider: metrics.getMeterProvider(), spanEvents: false };
const stop: Disposer = instrument(options);
stop();
// @ts-expect-error spanEvents is a boolean
instrument({ spanEvents: 'yes' });
