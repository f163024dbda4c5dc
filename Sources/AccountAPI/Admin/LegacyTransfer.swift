import AccountCore
import HTTPTypes

/// Legacy v3 `downloadAccount` and `uploadAccount` (federation-and-limits.md §D.7): POST forms of
/// `batchGet` and `batchCreate` that name their project in the body's `targetProjectId`.
enum LegacyTransferRPC {
    /// `target` (the v1 route), reached with the body's project: admins only, and without
    /// `targetProjectId` refused as production refuses it.
    static func endpoint(_ target: RPCEndpoint) -> RPCEndpoint {
        RPCEndpoint(method: .post, access: .adminOnly, maxBodyBytes: target.maxBodyBytes) { call in
            guard let project = try call.body.nonEmptyString("targetProjectId") else { throw AccountError(.insufficientPermission) }
            guard project == call.projectID else { throw APIError.permissionDenied }
            var scoped = call
            scoped.projectScoped = true
            return try await target.handler(scoped)
        }
    }
}
