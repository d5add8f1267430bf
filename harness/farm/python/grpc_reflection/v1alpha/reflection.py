# A stand-in for grpcio-reflection, which Debian does not package. labgrid's coordinator imports it
# only to offer gRPC server reflection (for grpcurl); the farm does not need that, so this offers
# nothing. ../shared/labgrid/SNAPSHOT.md; put this folder on PYTHONPATH after the labgrid source.
SERVICE_NAME = "grpc.reflection.v1alpha.ServerReflection"


def enable_server_reflection(service_names, server):
    pass
