// A file whose only service has no methods (a placeholder the IDL keeps
// for later). The generated file imports context for the service code,
// and nothing else uses it: it must still compile.
namespace go empty_service

service Placeholder {}
