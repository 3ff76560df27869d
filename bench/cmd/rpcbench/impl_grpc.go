package main

import (
	"context"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/petrel-rpc/petrel/bench/rpc/pb"
)

// grpc-go with protobuf and its defaults: one ClientConn shared by every
// caller (it multiplexes them as HTTP/2 streams on one connection), a
// server with default options.
func init() {
	register("grpc", implementation{serve: serveGRPC, newClient: newGRPCClient})
}

type grpcHandler struct {
	pb.UnimplementedEchoServiceServer
}

func (grpcHandler) Echo(ctx context.Context, req *pb.Request) (*pb.Response, error) {
	return &pb.Response{Action: req.Action, Msg: req.Msg}, nil
}

func serveGRPC(ln net.Listener) (func(context.Context) error, <-chan error, error) {
	s := grpc.NewServer()
	pb.RegisterEchoServiceServer(s, grpcHandler{})
	done := serveInBackground(func() error { return s.Serve(ln) })
	stop := func(ctx context.Context) error {
		stopped := make(chan struct{})
		go func() { s.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
			return nil
		case <-ctx.Done():
			s.Stop()
			return ctx.Err()
		}
	}
	return stop, done, nil
}

type grpcClient struct {
	conn *grpc.ClientConn
	c    pb.EchoServiceClient
}

func newGRPCClient(addr string, conc int) (echoClient, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	return &grpcClient{conn: conn, c: pb.NewEchoServiceClient(conn)}, nil
}

func (g *grpcClient) caller(i int, action, msg string) (echoFunc, error) {
	req := &pb.Request{Action: action, Msg: msg}
	return func(ctx context.Context) (string, string, error) {
		resp, err := g.c.Echo(ctx, req)
		if err != nil {
			return "", "", err
		}
		return resp.Action, resp.Msg, nil
	}, nil
}

func (g *grpcClient) Close() error { return g.conn.Close() }
