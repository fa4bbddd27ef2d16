export { type DoctorCheck } from './checks.js'
export { doctor, type DoctorHost, type DoctorReport } from './run.js'
export { egressSelfTest, type EgressSelfTest } from './egress-check.js'
